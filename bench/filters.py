"""Micro-benchmark of the per-post costs that #17 measures (not a test): dump decoding (zstd + JSON
parse + RawPost), language identification and MinHash signatures, each on realistic posts
(100-300 words, mean ~150) and with the alternatives compared side by side.

    .venv/bin/python bench/filters.py                      # every part (decode: 20,000 posts)
    .venv/bin/python bench/filters.py --part decode --posts 100000
    .venv/bin/python bench/filters.py --part language      # py3langid, fastText, the filter
    .venv/bin/python bench/filters.py --part minhash       # ours against datasketch (and rensa: '.[bench]' extra)

Language and MinHash time at most 3,000 posts. Each figure is the best of `--repeat` runs, the
alternatives interleaved (the host is shared and its speed drifts); CPU time of this process, not
wall time. Prints figures, then one JSON line.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import zstandard

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

# Our own word list, roughly in order of frequency in English Reddit self-posts (Zipf-weighted
# below), so that shingles, language scores and compressed size behave like real text.
VOCAB = """i the to and a my it of that in is me was for but so have just with this be not on
you he she we they at like about do feel what all if or her his are can know really because
get been would had when out up one time no people even now don't i'm it's there think how want
go going him them from more as an things much by never still got back work over then make day
years friend life feel only some could told being really family said who after mom dad school
job say thing where any other also off again year always help need something someone week
anxious happy sad angry tired scared guilty lonely grateful proud worried stressed okay honestly
literally basically tbh lol idk rn kinda gonna wanna yeah ok pretty good bad better worse right
last first long little new old same different every many few home house car money night morning
today yesterday tomorrow months ago since before while though through around down into very too
why talk talked talking asked tell friends boyfriend girlfriend husband wife brother sister kids
relationship together since started stopped tried trying keep kept feel feeling felt thought
sometimes usually anymore already almost enough maybe probably actually especially definitely
reddit post posting sub advice update edit thanks throwaway account mobile formatting sorry
college class exam boss coworker manager shift rent apartment roommate dog cat doctor therapist
meds sleep eat gym weight phone text message call wedding birthday party weekend holiday trip
wrong sure hard easy fine great awful weird normal crazy stupid nice cool fun serious""".split()
_WEIGHTS = [1 / (rank + 8) for rank in range(len(VOCAB))]
FIELDS_ARCTIC = {  # the other fields of an Arctic-Shift submission line, with typical values
    "all_awardings": [], "allow_live_comments": False, "archived": False, "author_created_utc": 1500000000,
    "author_flair_background_color": None, "author_flair_css_class": None, "author_flair_richtext": [],
    "author_flair_template_id": None, "author_flair_text": None, "author_flair_text_color": None,
    "author_flair_type": "text", "author_fullname": "t2_abcdefgh", "author_patreon_flair": False,
    "author_premium": False, "awarders": [], "can_gild": True, "category": None, "content_categories": None,
    "contest_mode": False, "discussion_type": None, "domain": "self.offmychest", "edited": False, "gilded": 0,
    "gildings": {}, "hidden": False, "is_created_from_ads_ui": False, "is_crosspostable": True, "is_meta": False,
    "is_original_content": False, "is_reddit_media_domain": False, "is_robot_indexable": True, "is_self": True,
    "is_video": False, "link_flair_background_color": "", "link_flair_css_class": None, "link_flair_richtext": [],
    "link_flair_text": None, "link_flair_text_color": "dark", "link_flair_type": "text", "locked": False,
    "media": None, "media_embed": {}, "media_only": False, "no_follow": True, "num_comments": 3,
    "num_crossposts": 0, "parent_whitelist_status": "all_ads", "pinned": False, "pwls": 6, "quarantine": False,
    "removed_by_category": None, "retrieved_on": 1700000500, "secure_media": None, "secure_media_embed": {},
    "send_replies": True, "spoiler": False, "subreddit_id": "t5_2ranw", "subreddit_subscribers": 1234567,
    "subreddit_type": "public", "suggested_sort": None, "thumbnail": "self", "top_awarded_type": None,
    "total_awards_received": 0, "treatment_tags": [], "upvote_ratio": 0.93, "whitelist_status": "all_ads",
    "wls": 6,
}


def post_words(rng: random.Random) -> int:
    """100-300 words, mean ~150, long tail (like real self-posts)."""
    return min(300, 100 + int(rng.expovariate(1 / 50)))


def realistic_text(rng: random.Random, words: int) -> str:
    """`words` words of English-like text in sentences of 4-20 words."""
    out: list[str] = []
    while len(out) < words:
        sentence = rng.choices(VOCAB, _WEIGHTS, k=min(rng.randint(4, 20), words - len(out)))
        sentence[0] = sentence[0].capitalize()
        sentence[-1] += rng.choice([".", ".", ".", "!", "?", "..."])
        out.extend(sentence)
    return " ".join(out)


def realistic_posts(n: int, seed: int = 17, arctic: bool = False) -> list[dict[str, Any]]:
    """Submissions as dump lines carry them; `arctic`: with the ~80 fields of an Arctic-Shift line."""
    rng = random.Random(seed)
    posts = []
    for i in range(n):
        post = {"id": f"s{i:07x}", "subreddit": rng.choice(["offmychest", "relationships", "TrueOffMyChest"]),
                "author": f"user{rng.randrange(10**6)}", "created_utc": 1700000000 + i,
                "title": realistic_text(rng, rng.randint(4, 14)).rstrip(".!?"),
                "selftext": realistic_text(rng, post_words(rng)), "over_18": False,
                "score": rng.randint(0, 500), "stickied": False, "distinguished": None}
        if arctic:
            post = {**FIELDS_ARCTIC, **post, "name": f"t3_{post['id']}", "permalink": f"/r/x/comments/{post['id']}/",
                    "url": f"https://www.reddit.com/r/x/comments/{post['id']}/"}
        posts.append(post)
    return posts


def write_dump(path: Path, posts: Iterable[dict[str, Any]]) -> int:
    with open(path, "wb") as raw, zstandard.ZstdCompressor(level=3).stream_writer(raw) as out:
        for post in posts:
            out.write(json.dumps(post).encode() + b"\n")
    return path.stat().st_size


def best_cpu(fn: Callable[[], Any], repeat: int) -> float:
    """Least CPU seconds of `repeat` runs of fn (this process only)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        fn()
        best = min(best, time.process_time() - started)
    return best


# --- part 1: dump decoding -------------------------------------------------------------------

def decode_part(posts: int, repeat: int) -> dict[str, Any]:
    """Posts/s of zstd alone, zstd + each parser, and the reader (iter_lines + parse_line -> RawPost)
    before (stdlib json) and after (orjson), on a lean dump (the fields bench/scale.py writes) and
    on one with the ~80 fields of an Arctic-Shift submission line."""
    import orjson

    from sources.dumps import _parse_line_stdlib, iter_lines, parse_line

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for shape in ("lean", "arctic"):
            path = Path(tmp) / f"RS_{shape}.zst"
            size = write_dump(path, realistic_posts(posts, arctic=shape == "arctic"))

            def lines_only() -> None:
                for _ in iter_lines(path):
                    pass

            def parsed(loads: Callable[[bytes], Any]) -> Callable[[], None]:
                def run() -> None:
                    for _, line in iter_lines(path):
                        loads(line)
                return run

            def reader(parse: Callable[..., Any]) -> Callable[[], None]:
                def run() -> None:
                    for n, line in iter_lines(path):
                        if line.strip():
                            parse(line, "f", n, "dump")
                return run

            runs = {"zstd": lines_only, "zstd+json": parsed(json.loads), "zstd+orjson": parsed(orjson.loads),
                    "reader_stdlib": reader(_parse_line_stdlib), "reader_orjson": reader(parse_line)}
            rates = {name: posts / secs for name, secs in interleaved_best(runs, repeat).items()}
            print(f"decode, {shape} dump ({posts:,} posts, {size / posts:.0f} compressed bytes a post):")
            for name, rate in rates.items():
                print(f"  {name:14s} {rate:>10,.0f} posts/s  {1e6 / rate:6.1f} us/post")
            print(f"  reader: orjson {rates['reader_orjson'] / rates['reader_stdlib']:.2f}x the stdlib reader")
            out[shape] = {k: round(v) for k, v in rates.items()} | {"compressed_bytes_per_post": round(size / posts)}
    return out


# --- part 2: language identification ---------------------------------------------------------

TABLE = REPO / "tests" / "filters" / "data" / "language_table.tsv"
SHARED_DEV = REPO.parent / "shared" / "data" / "express-reference" / "segments_dev.jsonl"


def language_table() -> list[tuple[frozenset[str], str]]:
    """(accepted languages, sentence) of our multilingual table."""
    rows = [line.split("\t", 1) for line in TABLE.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")]
    return [(frozenset(expected.split("|")), text) for expected, text in rows]


def table_posts(rows: list[tuple[frozenset[str], str]], per_language: int = 300,
                seed: int = 1) -> list[tuple[str, str]]:
    """(language, text) of post-length texts (>= 20 words, as the recipe's min_words) joined from
    the table's single-language sentences."""
    rng = random.Random(seed)
    by: dict[str, list[str]] = {}
    for langs, text in rows:
        if len(langs) == 1:
            by.setdefault(next(iter(langs)), []).append(text)
    out = []
    for lang, texts in sorted(by.items()):
        for _ in range(per_language):
            k = 2
            while len(" ".join(chosen := rng.sample(texts, k)).split()) < 20 and k < len(texts):
                k += 1
            out.append((lang, " ".join(chosen)))
    return out


def dev_windows(words: int, step: int = 60) -> list[str]:
    """Windows of `words` words of the real (English) EXPRESS dev segments, if ../shared is here."""
    if not SHARED_DEV.exists():
        return []
    out = []
    for line in SHARED_DEV.open(encoding="utf-8"):
        w = json.loads(line)["text"].split()
        out += [" ".join(w[i:i + words]) for i in range(0, max(1, len(w) - words), step)]
    return out


def interleaved_best(fns: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Least CPU seconds of each fn over `repeat` rounds that run every fn once (a slow spell of
    the shared host then hits all of them alike)."""
    best = {name: float("inf") for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            best[name] = min(best[name], best_cpu(fn, 1))
    return best


def language_part(posts: int, repeat: int) -> dict[str, Any]:
    """Accuracy (our table, post-length texts from it, real dev windows) and cost per post of
    py3langid alone, fastText alone (1,000 characters) and the filter (filters.language: fastText
    on 300 characters, then on 1,000, py3langid before a drop)."""
    from filters import language as lang_mod
    from filters.language import LanguageFilter, detect, detect_fast

    from schemas.records import RawPost

    english = LanguageFilter(frozenset({"en"}), 0.5)
    second_opinions = [0]

    def filter_keeps(text: str) -> bool:  # the filter itself (its quick read of 300 characters included)
        return english.check(RawPost(id="x", text=text)) is None

    def counting_second_opinions(text: str) -> tuple[str, float]:
        second_opinions[0] += 1
        return detect(text)

    keeps: dict[str, Callable[[str], bool]] = {
        "py3langid": lambda t: english.accepts(detect(t)), "fasttext": lambda t: english.accepts(detect_fast(t)),
        "filter": filter_keeps}
    labels = {"py3langid": detect, "fasttext": detect_fast}
    lang_mod.identifier(), lang_mod.fast_identifier()  # loads are not per post
    rows = language_table()
    made = table_posts(rows)
    out: dict[str, Any] = {}
    print(f"language: {len(rows)} table sentences, {len(made)} post-length texts made from them")
    for name, keep in keeps.items():
        label_ok = sum(labels[name](t)[0] in langs for langs, t in rows) if name in labels else None
        decision_wrong = sum(keep(t) != ("en" in langs) for langs, t in rows if len(langs) == 1)
        made_wrong = sum(keep(t) != (lang == "en") for lang, t in made)
        english_dropped = {w: sum(not keep(t) for t in texts)
                           for w, texts in ((w, dev_windows(w)) for w in (20, 50)) if texts}
        out[name] = {"table_label_accuracy": round(label_ok / len(rows), 3) if label_ok is not None else None,
                     "table_decisions_wrong": decision_wrong, "made_posts_decisions_wrong": made_wrong,
                     "dev_windows_english_dropped": english_dropped}
        print(f"  {name:10s} labels right {label_ok if label_ok is not None else '-'}/{len(rows)}; wrong keep/drop: "
              f"table {decision_wrong}/{sum(len(ls) == 1 for ls, _ in rows)}, post-length {made_wrong}/{len(made)}; "
              f"English dev windows dropped: " + (", ".join(f"{n} of {len(dev_windows(w))} ({w} words)"
                                                   for w, n in english_dropped.items()) or "(no ../shared)"))
    english_posts = [p["title"] + "\n\n" + p["selftext"] for p in realistic_posts(min(posts, 3000))]
    mixed = [t for _, t in made]
    for corpus_name, texts in (("English posts", english_posts), ("post-length texts, 7 languages", mixed)):
        second_opinions[0] = 0
        lang_mod.detect = counting_second_opinions  # the filter looks py3langid up at each call
        try:
            for t in texts:
                filter_keeps(t)
        finally:
            lang_mod.detect = detect
        asked = second_opinions[0] / len(texts)
        secs = interleaved_best({name: (lambda keep=keep: [keep(t) for t in texts]) for name, keep in keeps.items()},
                                repeat)
        us = {name: round(s / len(texts) * 1e6, 1) for name, s in secs.items()}
        print(f"  cost on {len(texts):,} {corpus_name}: " + ", ".join(f"{n} {u} us/post" for n, u in us.items())
              + f"; the filter asked py3langid for {asked:.1%}")
        out[f"us_per_post_{'english' if corpus_name.startswith('English') else 'multilingual'}"] = us | {
            "filter_second_opinion_share": round(asked, 4)}
    return out


# --- part 3: MinHash signatures ---------------------------------------------------------------

def _test_module(relpath: str) -> Any:
    """A test module by path (its corpus helpers), without making tests/ a package."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(Path(relpath).stem, REPO / relpath)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def minhash_part(posts: int, repeat: int) -> dict[str, Any]:
    """us/post of today's signatures (filters.near_duplicates.MinHasher, numpy), of datasketch's
    MinHash (affine32 over SHA-1: the signatures before, kept here as the reference) and of
    rensa's RMinHash and CMinHash (when installed) on realistic posts; then the drops each makes on
    the corpora of tests/filters/test_near_index.py and tests/pipeline/test_shards.py against
    datasketch's."""
    import numpy as np
    from datasketch import MinHash

    from filters.near_duplicates import NearDuplicateFilter, shingles

    near = NearDuplicateFilter(threshold=0.8, num_perm=64)

    def datasketch(seed: int) -> Callable[[NearDuplicateFilter, str], np.ndarray]:
        template = MinHash(num_perm=near.num_perm, seed=seed)

        def signature(self: NearDuplicateFilter, text: str) -> np.ndarray:
            m = MinHash(num_perm=self.num_perm, permutations=template.permutations, scheme=template.scheme)
            m.update_batch(shingles(text, self.shingle_words))
            return m.hashvalues.astype(np.uint32)
        return signature

    # datasketch with another seed: how far two draws of the same hash family differ on these corpora
    kinds = {"ours_numpy": NearDuplicateFilter.signature, "datasketch": datasketch(1), "datasketch_seed2": datasketch(2)}
    try:
        from rensa import CMinHash, RMinHash
    except ImportError:
        print("minhash: rensa is not installed (pip install -c constraints.txt '.[bench]' adds it to the comparison)")
    else:
        def rensa(kind: Any) -> Callable[[NearDuplicateFilter, str], np.ndarray]:
            def signature(self: NearDuplicateFilter, text: str) -> np.ndarray:
                m = kind(self.num_perm, 1)
                m.update(list(shingles(text, self.shingle_words)))  # bytes tokens, as datasketch hashes
                return np.asarray(m.digest(), dtype=np.uint64).astype(np.uint32)
            return signature

        kinds |= {"rensa_rminhash": rensa(RMinHash), "rensa_cminhash": rensa(CMinHash)}
    texts = [p["title"] + "\n\n" + p["selftext"] for p in realistic_posts(min(posts, 3000))]
    fns = {"shingles_only": lambda: [shingles(t, 3) for t in texts]}
    fns |= {name: (lambda sig=sig: [sig(near, t) for t in texts]) for name, sig in kinds.items()}
    us = {name: round(s / len(texts) * 1e6, 1) for name, s in interleaved_best(fns, repeat).items()}
    words = sum(len(t.split()) for t in texts) / len(texts)
    print(f"minhash, {len(texts):,} posts of {words:.0f} words on average, 64 permutations:")
    for name, u in us.items():
        print(f"  {name:16s} {u:7.1f} us/post")

    tni = _test_module("tests/filters/test_near_index.py")
    story = ("I feel so guilty about missing my sister's graduation last weekend because work ran late "
             "and I could not get away in time to see her walk across the stage")
    shards_texts = [f"post number {i} tells a different story about {w} and how the day went for everyone there"
                    for i, w in enumerate("dogs rain trains cooking music chess snow work tea maps bikes stars "
                                          "clay boats math birds wood glass".split())]
    shards_texts[1], shards_texts[4] = story, story.replace("last weekend", "last Saturday")
    shards_texts[9], shards_texts[15] = story + " again", story.upper()
    corpora = {"test_near_index (seed 7, exact on)": (tni._corpus(random.Random(7), 2400), True),
               "test_near_index (seed 3, 50 templates)": (tni._corpus(random.Random(3), 4000, templates=50), False),
               "test_shards (near copies of one story)": (shards_texts, True)}
    drops: dict[str, dict[str, set[tuple[int, int, str]]]] = {}
    original = NearDuplicateFilter.signature
    try:
        for name, sig in kinds.items():
            NearDuplicateFilter.signature = sig  # the in-order filters of the tests, with this signature
            drops[name] = {c: {(k, row, why) for k, shard in enumerate(tni._in_order(t, 700, exact=e))
                               for row, why in shard} for c, (t, e) in corpora.items()}
    finally:
        NearDuplicateFilter.signature = original
    out: dict[str, Any] = {"us_per_post": us, "words_per_post": round(words, 1), "drops": {}}
    for corpus in corpora:
        today = drops["datasketch"][corpus]
        print(f"  drops on {corpus}: datasketch {len(today)}", end="")
        out["drops"][corpus] = {"datasketch": len(today)}
        for name in (k for k in kinds if k != "datasketch"):
            theirs = drops[name][corpus]
            print(f"; {name} {len(theirs)} ({len(theirs - today)} not dropped today, {len(today - theirs)} "
                  "dropped today but not)", end="")
            out["drops"][corpus][name] = {"drops": len(theirs), "new": len(theirs - today),
                                          "lost": len(today - theirs)}
        print()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False)
    ap.add_argument("--posts", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--part", choices=["decode", "language", "minhash", "all"], default="all")
    args = ap.parse_args()
    parts = {"decode": decode_part, "language": language_part, "minhash": minhash_part}
    result: dict[str, Any] = {"bench": "filters", "posts": args.posts}
    for name, fn in parts.items():
        if args.part in (name, "all"):
            result[name] = fn(args.posts, args.repeat)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
