"""What honouring the takedown ledger at read costs the split (the one step that reads a dump), on
posts of real sentences (bench/real_text.py) cut as a build cuts them: no ledger, a ledger of post
ids, of ids and authors, and of ids, authors and the fingerprints apply resolves (texts whole and per
field), so that every line is parsed and its words looked up. Also the matcher alone per line.

    .venv/bin/python bench/takedowns.py --posts 30000 --taken 200 --repeats 3
Prints figures, then one JSON line.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.real_text import RealTextSpec, write_dump  # noqa: E402
from common.matching.fingerprints import fingerprint  # noqa: E402
from pipeline.split import InputFile, SplitStep  # noqa: E402
from sources.dumps import iter_lines  # noqa: E402
from warehouse.layout import RunPaths, Warehouse  # noqa: E402
from warehouse.ledgers.takedowns import (Takedown, TakedownLedger, run_takedowns, save_takedown_state,  # noqa: E402
                                 takedown_state)

def ledgers(root: Path, dump: Path, taken: int, seed: int) -> dict[str, Path]:
    """Warehouses whose ledgers are like those apply leaves: `taken` posts, a tenth as many authors,
    and their texts' fingerprints; each with a run that honours its ledger. name -> the run's folder."""
    rows = [json.loads(line) for _, line in iter_lines(dump) if line.strip()]
    chosen = random.Random(seed).sample(rows, taken)
    ids, names = [p["id"] for p in chosen], [p["author"] for p in chosen[: max(1, taken // 10)]]
    runs = {}
    for name in ("none", "ids", "ids+authors", "ids+authors+texts"):
        wh = Warehouse(root / name)
        ledger = TakedownLedger(wh.root)
        if name != "none":
            ledger.add(ids, names if "authors" in name else [], reason="bench")
        if name.endswith("texts"):
            key = ledger.key()
            ledger.append([Takedown("resolved", "bench", "2031-01-01T00:00:00Z", "apply", post_id=p["id"],
                                    texts=[list(fp) for t in (p["selftext"], f"{p['title']}\n\n{p['selftext']}")
                                           if (fp := fingerprint(key, t))]) for p in chosen])
        run = wh.run("run-bench")
        run.root.mkdir(parents=True)
        save_takedown_state(run.takedowns, takedown_state(wh))
        runs[name] = run.root
    return runs


def time_split(dump: Path, run: Path) -> tuple[float, int]:
    """Seconds of one split of the whole dump (one shard per 100,000 lines, a build's default)."""
    shards = run / "shards"
    shutil.rmtree(shards, ignore_errors=True)
    unit = InputFile(str(dump), shards, dump.name.split(".")[0], 100_000)
    t0 = time.perf_counter()
    result = SplitStep().run(unit, lambda p: p)
    return time.perf_counter() - t0, result.lines


def main() -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False)
    ap.add_argument("--posts", type=int, default=30_000)
    ap.add_argument("--taken", type=int, default=200, help="posts taken down (a tenth as many authors)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    out: dict[str, object] = {"bench": "takedowns", "posts": args.posts, "taken": args.taken}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dump = write_dump(work, RealTextSpec(posts=args.posts))
        runs = ledgers(work / "warehouses", dump, args.taken, seed=5)
        lines = [line for _, line in iter_lines(dump)]
        for name, run in runs.items():
            matcher = run_takedowns(RunPaths(run).takedowns).matcher()
            best, n = min(time_split(dump, run) for _ in range(args.repeats))
            t0 = time.perf_counter()
            hits = sum(matcher.line_hit(line) for line in lines) if matcher else 0
            alone = time.perf_counter() - t0
            out[name] = {"split_seconds": round(best, 3), "lines_per_second": round(n / best),
                         "matcher_us_per_line": round(1e6 * alone / len(lines), 2), "lines_hit": hits}
            print(f"{name:18s} split {best:6.2f} s = {n / best:9,.0f} lines/s; matcher alone "
                  f"{1e6 * alone / len(lines):6.2f} us/line, {hits} lines hit")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
