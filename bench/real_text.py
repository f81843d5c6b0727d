"""A bench corpus of real Reddit sentences: the sentences of the EXPRESS dev file
(../shared/data/express-reference/segments_dev.jsonl, read at run time, never copied into the
repository), shuffled into posts of realistic length (100-300 words, mean ~150), ~8 % of them with
one to three disclosing sentences (those holding a gold mask) and the rest with none. The build
then meets real language: real non-disclosing "I feel like ..." sentences, real names, real
punctuation, instead of the synthetic corpus's templates. Titles and bodies are written as Reddit's
JSON carries them (`&`, `<`, `>` escaped), so the reader decodes them as it decodes a real dump.

    .venv/bin/python bench/real_text.py --posts 30000 --out /tmp/bench   # writes RS_2031-03.zst
"""
from __future__ import annotations

import argparse
import html
import json
import random
import re
import sys
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

import zstandard

REPO = Path(__file__).resolve().parent.parent
DEV = REPO.parent / "shared" / "data" / "express-reference" / "segments_dev.jsonl"
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+")
SUBREDDITS = ("relationships", "offmychest", "Anxiety", "depression", "college", "careerguidance", "parenting",
              "TrueOffMyChest", "CasualConversation", "breakups", "AskWomen", "AskMen", "self", "lonely",
              "GriefSupport", "teenagers", "work", "dating_advice", "mentalhealth", "confession")


@dataclass(frozen=True)
class RealTextSpec:
    posts: int = 30_000
    seed: int = 11
    month: str = "2031-03"
    disclosure_share: float = 0.08
    min_words: int = 100
    max_words: int = 300
    mean_words: int = 150


def dev_sentences(path: Path = DEV) -> tuple[list[str], list[str]]:
    """(disclosing, other) sentences of the dev file: a sentence is disclosing when a gold mask of
    its segment falls inside it. Sentences of fewer than 3 words are left out."""
    if not path.exists():
        raise SystemExit(f"{path}: the EXPRESS dev file is needed for the real-text corpus (see DEVELOPERS.md)")
    disclosing, other = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        text, golds = row["text"], [(g["start"], g["end"]) for g in row["gold_spans"]]
        pos = 0
        for piece in _SENTENCE_END.split(text) + [""]:
            start = text.find(piece, pos) if piece else len(text)
            end = start + len(piece)
            pos = end
            sentence = " ".join(piece.split())
            if len(sentence.split()) < 3:
                continue
            (disclosing if any(start <= s and e <= end for s, e in golds) else other).append(sentence)
    return disclosing, other


def _target_words(rng: random.Random, spec: RealTextSpec) -> int:
    """A right-skewed length with the configured mean, within bounds (as sources/synthetic.py)."""
    shape = 1.3
    n = spec.min_words + int(rng.gammavariate(shape, max(1.0, spec.mean_words - spec.min_words - 12) / shape))
    return min(n, spec.max_words - 20)


def posts(spec: RealTextSpec) -> list[dict] | object:
    """The dump records, in order; the same spec always gives the same records."""
    disclosing, other = dev_sentences()
    titles = [s for s in other if len(s.split()) <= 12]
    rng = random.Random(spec.seed)
    base = int(datetime(*(int(x) for x in spec.month.split("-")), 1, tzinfo=timezone.utc).timestamp())
    for n in range(spec.posts):
        chosen = [rng.choice(disclosing) for _ in range(rng.choices((1, 2, 3), (70, 25, 5))[0])] \
            if rng.random() < spec.disclosure_share else []
        target, words = _target_words(rng, spec), sum(len(s.split()) for s in chosen)
        while words < target:
            s = rng.choice(other)
            chosen.append(s)
            words += len(s.split())
        rng.shuffle(chosen)
        paragraphs, k = [], 0
        while k < len(chosen):
            size = rng.randint(2, 6)
            paragraphs.append(" ".join(chosen[k:k + size]))
            k += size
        yield {"id": f"b{spec.seed}x{n:x}", "subreddit": rng.choice(SUBREDDITS),
               "author": f"user_{rng.randrange(200_000)}", "created_utc": base + n * 7 + rng.randrange(7),
               "retrieved_on": base + 40 * 86_400, "title": html.escape(rng.choice(titles), quote=False),
               "selftext": html.escape("\n\n".join(paragraphs), quote=False),
               "over_18": False, "score": int(rng.paretovariate(1.2)) - 1, "num_comments": rng.randrange(60),
               "stickied": False, "distinguished": None}


def write_dump(directory: Path, spec: RealTextSpec) -> Path:
    """`directory/RS_<month>.zst` of the spec's posts; reused when a sidecar says it is the same spec."""
    directory.mkdir(parents=True, exist_ok=True)
    path, sidecar = directory / f"RS_{spec.month}.zst", directory / f"RS_{spec.month}.spec.json"
    if path.exists() and sidecar.exists() and json.loads(sidecar.read_text()) == asdict(spec):
        return path
    sidecar.unlink(missing_ok=True)
    with open(path, "wb") as fh, zstandard.ZstdCompressor(level=3).stream_writer(fh) as out:
        for record in posts(spec):
            out.write(json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n")
    sidecar.write_text(json.dumps(asdict(spec)))
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    ap.add_argument("--posts", type=int, default=RealTextSpec.posts)
    ap.add_argument("--seed", type=int, default=RealTextSpec.seed)
    ap.add_argument("--month", default=RealTextSpec.month)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    disclosing, other = dev_sentences()
    path = write_dump(Path(args.out), RealTextSpec(args.posts, args.seed, args.month))
    print(f"{path}: {args.posts:,} posts from {len(disclosing):,} disclosing and {len(other):,} other sentences, "
          f"{path.stat().st_size / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
