"""Throughput of the ingest path (zstd read -> comment join -> filter chain -> PII scrub) on the demo corpus.

Usage: python bench/ingest.py [--posts N] [--config configs/dumps.toml]
Prints figures, then one JSON line.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psutil  # noqa: E402

from filters.base import run_filters  # noqa: E402
from filters.language import identifier  # noqa: E402
from filters.chain import filters_from_config  # noqa: E402
from privacy.scrubber import scrub_post  # noqa: E402
from schemas.config import load_recipe  # noqa: E402
from schemas.funnel import Funnel  # noqa: E402
from sources.demo import DemoSpec, write_demo_dump  # noqa: E402
from sources.dumps import read_dump  # noqa: E402
from sources.join import SubmissionFlags, join_comments  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False)
    ap.add_argument("--posts", type=int, default=20000)
    ap.add_argument("--config", default="configs/dumps.toml")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        dump = write_demo_dump(tmp, DemoSpec(posts=args.posts))
        chain = filters_from_config(load_recipe(args.config).filters)
        identifier()  # the language model loads once (~1 s, tens of MB); measure the stream, not the load
        proc, funnel = psutil.Process(), Funnel()
        rss0 = proc.memory_info().rss
        t0 = time.perf_counter()
        for post in run_filters(join_comments(read_dump(dump), SubmissionFlags()), chain, funnel):
            scrub_post(post)
        secs = time.perf_counter() - t0
        rss = proc.memory_info().rss
    funnel.check("bench")
    out = {"bench": "ingest", "posts": funnel.read, "seconds": round(secs, 3),
           "posts_per_second": round(funnel.read / secs, 1), "rss_growth_mb": round((rss - rss0) / 2**20, 1),
           "config": args.config, "funnel": funnel.to_dict()}
    print(f"read {funnel.read} records in {secs:.2f} s = {out['posts_per_second']} records/s; "
          f"RSS grew {out['rss_growth_mb']} MB; kept {funnel.kept}")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
