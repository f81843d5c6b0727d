"""Seeded Reddit-like submissions of realistic length (100-300 words), for tests and benchmarks.

The demo corpus (sources/demo.py) is short templates that compress to a few dozen bytes a post;
memory and speed at real sizes need posts as long and as varied as real ones. Posts here are
built from our own sentence parts (sources/data/synthetic_words.toml): many slotted sentences,
so a post is hundreds of distinct bytes even after zstd. A configurable share of posts carries
one to three first-person emotion disclosures in the forms the extractor accepts; the others
carry no trigger at all, so the disclosing share is known. Two outputs: a Pushshift-style
`RS_YYYY-MM.zst` dump (the real reader path), and release example rows (schemas.records.EXAMPLES)
made directly from the known disclosure spans, for a large release without running spaCy.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import zstandard

from schemas.records import MASK

WORDS = Path(__file__).parent / "data" / "synthetic_words.toml"
FAMILIES = ("family1", "family2", "family3")
_SLOT = re.compile(r"\{(\w+)\}")
_ID_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
_SINGULAR = {"a", "an old", "a second", "one more", "every", "that", "this"}
FREE_SHARE = 0.7  # share of filler sentences built from free clauses rather than sentence templates
TYPO_RATE = 0.06  # share of filler words of 5+ letters with a typo


@dataclass(frozen=True)
class SyntheticSpec:
    posts: int = 1000
    seed: int = 7
    month: str = "2024-01"
    disclosure_share: float = 0.08  # share of posts with at least one disclosure
    min_words: int = 100  # selftext words
    max_words: int = 300
    mean_words: int = 150
    names_as: str = ""  # e.g. "[NAME]": write people's names as the scrubber leaves them

    def __post_init__(self) -> None:
        if not 0.0 <= self.disclosure_share <= 1.0:
            raise ValueError(f"disclosure_share must be in [0, 1], not {self.disclosure_share}")
        if not 0 < self.min_words < self.mean_words < self.max_words - 30:
            raise ValueError("need 0 < min_words < mean_words < max_words - 30")


@dataclass(frozen=True)
class Span:
    """One inserted disclosure: `text[start:end] == surface` in the post text (title + body)."""

    start: int
    end: int
    surface: str
    pattern: str


@dataclass
class SyntheticPost:
    record: dict[str, Any]  # the dump record, as sources/dumps.py reads it
    spans: list[Span] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The post text as sources/reddit_json.py builds it (title, blank line, selftext)."""
        return f"{self.record['title']}\n\n{self.record['selftext']}"


def load_words(path: Path = WORDS) -> dict[str, Any]:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


class _Writer:
    """Fills slotted sentences from the word lists with one random generator."""

    def __init__(self, rng: random.Random, words: dict[str, Any]):
        self.rng, self.w = rng, words
        self._random = rng.random

    def pick(self, seq: list[str] | tuple[str, ...]) -> str:
        """rng.choice at a third of its cost (this runs ~80 times per post)."""
        return seq[int(self._random() * len(seq))]

    def fill(self, template: str) -> str:
        def slot(m: re.Match[str]) -> str:
            key = m.group(1)
            value = self.pick(self.w[key.lower()])
            return value[:1].upper() + value[1:] if key[:1].isupper() else value
        return _SLOT.sub(slot, template)

    def noun_phrase(self) -> str:
        w, pick = self.w, self.pick
        det, adj, noun = pick(w["determiner"]), pick(w["adjective_np"]), pick(w["noun"])
        if noun[-1] == "s" and det in _SINGULAR:
            det = "the"
        phrase = f"{det} {adj} {noun}" if adj else f"{det} {noun}"
        return "an" + phrase[1:] if phrase[:2] == "a " and phrase[2] in "aeiou" else phrase

    def extra(self) -> str:
        """What real posts are full of and templates lack: prices, clock times, names, places."""
        roll = self._random()
        if roll < 0.12:
            return f" for ${int(5 + roll * 20_000):,}"
        if roll < 0.2:
            return f" at {1 + int(roll * 1000) % 12}:{int(roll * 100_000) % 60:02d}"
        if roll < 0.28:
            return " with " + self.pick(self.w["first_name"])
        pp = self.pick(self.w["preposition_phrase"])
        return " " + pp if pp else ""

    def clause(self) -> str:
        """subject [adverb] verb noun-phrase [extra], or "I wanted to" + verb + noun-phrase [extra]."""
        w, pick, r = self.w, self.pick, self._random()
        if r < 0.25:
            return f"{pick(w['wanted'])} {pick(w['base_verb'])} {self.noun_phrase()}{self.extra()}"
        subject = pick(w["first_name"]) if r > 0.88 else pick(w["subject"])
        adverb = pick(w["adverb"])
        verb = f"{adverb} {pick(w['verb'])}" if adverb else pick(w["verb"])
        return f"{subject} {verb} {self.noun_phrase()}{self.extra()}"

    def free_sentence(self) -> str:
        """One or two clauses, sometimes led by a discourse marker."""
        text = self.clause()
        r = self._random()
        if r < 0.45:
            text += f" {self.pick(self.w['conjunction'])} {self.clause()}"
        if r > 0.85:
            text = f"{self.pick(self.w['discourse'])} {text}"
        return text[:1].upper() + text[1:] + "."

    def typos(self, sentence: str, n_words: int) -> str:
        """Real posts carry typos: now and then a longer word gets two letters swapped, one dropped
        or one doubled (about TYPO_RATE of the words of 5+ letters, half of all words)."""
        if self._random() >= TYPO_RATE * n_words / 2:
            return sentence
        words = sentence.split(" ")
        k = int(self._random() * len(words))
        word = words[k]
        if len(word) < 5 or not word.isalpha():
            return sentence
        i = 1 + int(self._random() * (len(word) - 3))
        kind = int(self._random() * 3)
        if kind == 0:
            words[k] = word[:i] + word[i + 1] + word[i] + word[i + 2:]
        elif kind == 1:
            words[k] = word[:i] + word[i + 1:]
        else:
            words[k] = word[:i] + word[i] + word[i:]
        return " ".join(words)

    def disclosure(self) -> tuple[str, int, str, str]:
        """A disclosure sentence, the offset of its emotion word, the word and its family."""
        family = self.rng.choices(FAMILIES, weights=(5, 4, 1))[0]
        before, after = self.pick(self.w[family]).split("{e}", 1)
        head = self.fill(before) + self.pick(self.w["intensifiers"])
        word = self.pick(self.w["adjectives" if family == "family2" else "emotions"])
        return head + word + self.fill(after), len(head), word, family


def _target_words(rng: random.Random, spec: SyntheticSpec) -> int:
    """A right-skewed length (gamma above the minimum) with the configured mean, kept in bounds."""
    shape = 1.3
    scale = max(1.0, spec.mean_words - spec.min_words - 12) / shape  # 12: the last sentence's overshoot
    n = spec.min_words + int(rng.gammavariate(shape, scale))
    return min(n, spec.max_words - 30)  # room for the last sentence and a closing line


def _post(rng: random.Random, writer: _Writer, spec: SyntheticSpec, n: int, base_ts: int,
          disclosing: bool) -> SyntheticPost:
    w = writer.w
    title = writer.fill(rng.choice(w["titles"]))
    n_disclosures = rng.choices((1, 2, 3), weights=(70, 25, 5))[0] if disclosing else 0
    found = [writer.disclosure() for _ in range(n_disclosures)]
    target = _target_words(rng, spec)
    words = sum(len(s.split()) for s, *_ in found)
    sentences: list[str] = []
    unused = list(range(len(w["fillers"])))  # a template at most once per post
    while words < target:
        if rng.random() < FREE_SHARE or not unused:
            s = writer.free_sentence()
        else:
            s = writer.fill(w["fillers"][unused.pop(rng.randrange(len(unused)))])
        n_words = s.count(" ") + 1
        sentences.append(writer.typos(s, n_words))
        words += n_words
    closing = [writer.fill(q) for q in rng.sample(w["questions"], rng.choice((0, 1, 1, 2)))]
    while closing and words + sum(len(q.split()) for q in closing) > spec.max_words:
        closing.pop()
    # disclosures go between fillers, each with its emotion word's offset, for the spans after joining
    marked: list[tuple[str, tuple[int, str, str] | None]] = [(s, None) for s in sentences]
    for sentence, offset, word, family in found:
        marked.insert(rng.randrange(len(marked) + 1), (sentence, (offset, word, family)))
    marked += [(q, None) for q in closing]
    body, spans = _join(marked, rng, len(title) + 2)
    record = {
        "id": _post_id(spec.seed, n),
        "subreddit": rng.choice(w["subreddits"]),
        "author": f"{rng.choice(('throwaway', 'user', 'anon', 'just'))}_{rng.randrange(100_000)}",
        "created_utc": base_ts + n * 9 + rng.randrange(9),
        "retrieved_on": base_ts + 40 * 86_400,
        "title": title,
        "selftext": body,
        "over_18": False,
        "score": int(rng.paretovariate(1.2)) - 1,
        "num_comments": rng.randrange(60),
        "stickied": False,
        "distinguished": None,
    }
    return SyntheticPost(record, spans)


def _join(marked: list[tuple[str, tuple[int, str, str] | None]], rng: random.Random,
          start: int) -> tuple[str, list[Span]]:
    """Sentences into paragraphs of 2-6 sentences; disclosure spans as offsets in the post text."""
    parts: list[str] = []
    spans: list[Span] = []
    pos, in_paragraph, paragraph_len = start, 0, rng.randint(2, 6)
    for k, (sentence, mark) in enumerate(marked):
        if k:
            sep = " "
            if in_paragraph >= paragraph_len:
                sep, in_paragraph, paragraph_len = "\n\n", 0, rng.randint(2, 6)
            parts.append(sep)
            pos += len(sep)
        if mark is not None:
            offset, word, family = mark
            spans.append(Span(pos + offset, pos + offset + len(word), word, family))
        parts.append(sentence)
        pos += len(sentence)
        in_paragraph += 1
    return "".join(parts), spans


def _post_id(seed: int, n: int) -> str:
    """A Reddit-like base-36 id, distinct per (seed, n)."""
    value, out = (seed % 1000) * 10**8 + n + 36**5, ""
    while value:
        value, r = divmod(value, 36)
        out = _ID_DIGITS[r] + out
    return out


def synthetic_posts(spec: SyntheticSpec = SyntheticSpec(), only_disclosing: bool = False) -> Iterator[SyntheticPost]:
    """`spec.posts` posts in order; the same spec always gives the same posts."""
    rng = random.Random(spec.seed)
    words = load_words()
    if spec.names_as:
        words = {**words, "first_name": [spec.names_as]}
    writer = _Writer(rng, words)
    year, month = (int(x) for x in spec.month.split("-"))
    base_ts = int(datetime(year, month, 1, tzinfo=timezone.utc).timestamp())
    for n in range(spec.posts):
        disclosing = only_disclosing or rng.random() < spec.disclosure_share
        yield _post(rng, writer, spec, n, base_ts, disclosing)


def write_synthetic_dump(directory: str | Path, spec: SyntheticSpec = SyntheticSpec()) -> Path:
    """Stream the posts to `directory/RS_<month>.zst` (NDJSON, zstd) and return its path."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"RS_{spec.month}.zst"
    with open(path, "wb") as fh, zstandard.ZstdCompressor(level=3).stream_writer(fh) as out:
        for post in synthetic_posts(spec):
            out.write(json.dumps(post.record, ensure_ascii=False).encode("utf-8") + b"\n")
    return path


def synthetic_examples(n: int, seed: int = 7, month: str = "2024-01") -> Iterator[dict[str, Any]]:
    """`n` release example rows (schemas.records.EXAMPLES) from disclosing posts: the text, the
    text with each disclosure masked, surfaces, vocabulary labels and pattern families. Names are
    written `[NAME]`, as in a scrubbed release."""
    from schemas.vocabulary import default_vocabulary, normalize

    vocab = default_vocabulary()
    for post in synthetic_posts(SyntheticSpec(posts=n, seed=seed, month=month, names_as="[NAME]"),
                                only_disclosing=True):
        text, masked, pos = post.text, [], 0
        for s in post.spans:
            masked += [text[pos:s.start], MASK]
            pos = s.end
        masked.append(text[pos:])
        surfaces = [s.surface for s in post.spans]
        yield {
            "post_id": post.record["id"],
            "segment_index": 0,
            "subreddit": post.record["subreddit"],
            "created_utc": post.record["created_utc"],
            "text": text,
            "masked_text": "".join(masked),
            "surfaces": surfaces,
            "labels": [vocab.canonical(s) or normalize(s) for s in surfaces],
            "patterns": [s.pattern for s in post.spans],
            "n_masks": len(surfaces),
        }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sources.synthetic", description=__doc__.split("\n")[0],
                                 allow_abbrev=False)
    ap.add_argument("directory", type=Path)
    ap.add_argument("--posts", type=int, default=SyntheticSpec.posts)
    ap.add_argument("--seed", type=int, default=SyntheticSpec.seed)
    ap.add_argument("--month", default=SyntheticSpec.month)
    ap.add_argument("--disclosure-share", type=float, default=SyntheticSpec.disclosure_share)
    args = ap.parse_args(argv)
    path = write_synthetic_dump(args.directory, SyntheticSpec(posts=args.posts, seed=args.seed, month=args.month,
                                                              disclosure_share=args.disclosure_share))
    print(f"{path}: {args.posts} posts, {path.stat().st_size / args.posts:.0f} bytes/post compressed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
