"""Cost of the PII scrubber per post (names on and off) and the name recall its sentence filter loses.

Posts are 100-300 words of our own Reddit-style sentences, one in ten carrying a sentence of the
PII table (tests/filters/data/pii_table.tsv). The sentence filter (privacy/names.py) sends to
NER only sentences with an uncommon capitalized word; its recall loss is measured against NER
over every sentence, on these posts and, when ../shared is there, on the real Reddit segments of
segments_dev.jsonl (read at run time, never shipped).

Usage: python bench/pii.py [--posts 400] [--batch 256] [--dev PATH]
Prints figures, then one JSON line.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from privacy import names as pii_names  # noqa: E402
from privacy.scrubber import KINDS, Scrubber  # noqa: E402

FILLER = [
    "I don't really know how to start this, so I'll just say it.",
    "It has been a rough few months and I feel like I'm running out of patience with everyone.",
    "My job keeps me busy but when I get home the apartment is so quiet that it hurts.",
    "We used to go hiking every weekend, and now we barely talk over dinner.",
    "Last night I stayed up until 3am scrolling through old photos from 2019.",
    "I keep telling myself that it's fine, that everyone goes through this.",
    "Honestly I am so tired of pretending to be okay at work.",
    "When I told my mom she just said I was overreacting, which made me feel even worse.",
    "The worst part is that I can't even explain why I feel this way.",
    "I moved to Chicago for college and never really made friends there.",
    "My therapist says I should write things down, so here I am posting on Reddit at midnight.",
    "Some days are better, like last Sunday when I finally cleaned my room and felt proud.",
    "Other days I can't get out of bed until noon and I hate myself for it.",
    "I'm 26 and I feel like everyone my age has their life together except me.",
    "We split the rent 50/50 but he never pays on time and it makes me anxious.",
    "I spent $400 on a trip to Denver that I didn't even enjoy.",
    "At Christmas my family acts like nothing happened, and I play along.",
    "My dog is the only reason I get up in the morning some weeks.",
    "I know this sounds dramatic, but I really don't see the point anymore.",
    "Anyway, thanks for reading this far if you did.",
    "I used to love reading, now I can't finish a single chapter without zoning out.",
    "He said he needed space and then posted pictures from a party the same night.",
    "I tried the Headspace app for a month and it helped a little.",
    "My grades dropped from a 3.8 to a 2.9 in one semester and my parents don't know.",
    "I keep replaying the conversation in my head and thinking of what I should have said.",
    "It's been 412 days since the accident and I still flinch at every car horn.",
    "The weird thing is I'm not even sad, I'm just numb.",
    "I started running again and did 5k in 31 minutes, which is slow but I'm happy about it.",
    "Every time my phone buzzes I hope it's him and it never is.",
    "My manager at Target is actually really supportive, which surprised me.",
    "I feel guilty for being jealous of my best friend's new relationship.",
    "We watched the game on Saturday and for a couple of hours I forgot about everything.",
    "I think I'm finally ready to ask for help, I just don't know where to start.",
    "TL;DR: I feel lost and I don't know what to do next.",
    "Edit: thank you all for the kind words, I didn't expect this many replies.",
    "Jake from my old team texted me out of nowhere and I didn't know how to reply.",
    "My sister Anna keeps inviting me to dinner and I keep making excuses.",
    "I'm scared that if I say something at Thanksgiving it will ruin the whole day.",
    "Posting from a throwaway because my family follows my main account.",
    "Sometimes I wonder if anyone would notice if I just stopped replying to texts.",
]


def table_rows() -> list[tuple[str, list[tuple[str, str]]]]:
    rows = []
    for line in (ROOT / "tests" / "filters" / "data" / "pii_table.tsv").read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or line.startswith("text\t") or not line.strip():
            continue
        text, pii, _keep = line.split("\t")
        rows.append((text, [tuple(x.split("=", 1)) for x in pii.split(" | ") if x]))
    return rows


def make_posts(n: int, seed: int = 7) -> list[str]:
    """n posts of 100-300 words; one in ten has one PII sentence of the table."""
    rng = random.Random(seed)
    pii_sentences = [text for text, pii in table_rows() if pii]
    posts = []
    for _ in range(n):
        target, words, parts = rng.randint(100, 300), 0, []
        while words < target:
            s = rng.choice(FILLER)
            parts.append(s)
            words += len(s.split())
        if rng.random() < 0.1:
            parts.insert(rng.randrange(len(parts) + 1), rng.choice(pii_sentences))
        paragraphs = [" ".join(parts[i:i + 4]) for i in range(0, len(parts), 4)]
        posts.append("\n\n".join(paragraphs))
    return posts


def timed_scrub(scrubber: Scrubber, posts: list[str], batch: int) -> float:
    t0 = time.process_time()
    for i in range(0, len(posts), batch):
        scrubber.scrub_many(posts[i:i + batch])
    return time.process_time() - t0


def filter_recall(finder: pii_names.NameFinder, texts: list[str]) -> dict[str, float]:
    """PERSON spans NER finds on every sentence vs. on the filter's sentences only."""
    everything = pii_names.candidate_sentences
    filtered = finder.find_many(texts)
    try:
        pii_names.candidate_sentences = lambda t, **_: list(pii_names.sentences(t))
        full = finder.find_many(texts)
    finally:
        pii_names.candidate_sentences = everything
    want = {(i, r.start, r.end) for i, rs in enumerate(full) for r in rs}
    got = {(i, r.start, r.end) for i, rs in enumerate(filtered) for r in rs}
    words = sum(len(t.split()) for t in texts)
    sent = sum(len(s.split()) for t in texts for _, s in pii_names.candidate_sentences(t))
    return {"names_all_sentences": len(want), "names_filtered": len(got & want),
            "recall_kept": round(len(got & want) / len(want), 4) if want else 1.0,
            "share_of_words_sent_to_ner": round(sent / words, 3) if words else 0.0}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--posts", type=int, default=400)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--dev", default=str(ROOT.parent / "shared" / "data" / "express-reference" / "segments_dev.jsonl"))
    ap.add_argument("--dev-rows", type=int, default=1000)
    args = ap.parse_args()
    posts = make_posts(args.posts)
    words = sum(len(p.split()) for p in posts)
    on = Scrubber(KINDS)
    off = Scrubber(tuple(k for k in KINDS if k != "name"))
    warm = [text for text, _ in table_rows()]  # warm-up: every recognizer compiles and loads once
    timed_scrub(on, warm, args.batch)
    timed_scrub(off, warm, args.batch)
    secs_off = timed_scrub(off, posts, args.batch)
    secs_on = timed_scrub(on, posts, args.batch)
    out = {"bench": "pii", "posts": len(posts), "words_per_post": round(words / len(posts), 1),
           "us_per_post_names_off": round(secs_off / len(posts) * 1e6), "us_per_post_names_on": round(secs_on / len(posts) * 1e6),
           "synthetic_filter": filter_recall(on.names, posts)}
    print(f"{len(posts)} posts, {out['words_per_post']} words/post (CPU time, batches of {args.batch}):")
    print(f"  names off: {out['us_per_post_names_off']:,} us/post; names on: {out['us_per_post_names_on']:,} us/post")
    print(f"  sentence filter on these posts: {out['synthetic_filter']}")
    dev = Path(args.dev)
    if dev.exists() and args.dev_rows > 0:
        rows = [json.loads(line) for line in dev.read_text(encoding="utf-8").splitlines()[:args.dev_rows]]
        texts = [r["masked_text"].replace("<mask>", "sad") for r in rows]
        out["dev_filter"] = filter_recall(on.names, texts)
        dev_words = sum(len(t.split()) for t in texts)
        secs = timed_scrub(on, texts, args.batch)
        out["dev_us_per_segment_names_on"] = round(secs / len(texts) * 1e6)
        out["dev_words_per_segment"] = round(dev_words / len(texts), 1)
        print(f"  real Reddit segments ({len(texts)}, {out['dev_words_per_segment']} words each): "
              f"filter {out['dev_filter']}; names on {out['dev_us_per_segment_names_on']:,} us/segment")
    else:
        print(f"dev file {dev} not found: the filter's recall on real text is skipped")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
