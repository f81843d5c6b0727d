"""Benchmark of the data-quality report at realistic size.

Publishes two successive releases of synthetic examples (sources/synthetic.py: posts of 100-300
words, each with a disclosure): v1, then v2 without a tenth of v1's posts and with as many new
ones, each with a funnel, and v2 with its run's disclosures table (acceptance scores), as a build
leaves them. Then writes v2's report (the full comparison with v1) with `express report` in a
fresh process, `--repeat` times: wall and CPU seconds of that process (the machine is shared),
its peak RSS and the page's size. Prints the figures, then one JSON line.

    .venv/bin/python bench/report.py [--examples 30000] [--repeat 3] [--gate] [--keep DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from common.parquet import ParquetSink  # noqa: E402
from schemas.config import GateConfig, Recipe  # noqa: E402
from schemas.records import DISCLOSURES, EXAMPLES  # noqa: E402
from sources.synthetic import synthetic_examples  # noqa: E402
from warehouse.layout import Warehouse  # noqa: E402
from warehouse.releases.publish import publish_release  # noqa: E402

THRESHOLD = 0.558  # the shipped acceptance model's


def _funnel(kept: int, rng: random.Random) -> dict:
    dropped = {"no_disclosure": kept * 11, "deleted": kept // 3, "removed": kept // 4, "nsfw": kept // 9,
               "duplicate": kept // 12, "bot": kept // 20, "not_accepted": kept // 25, "only_negated": kept // 10}
    dropped = {k: int(v * rng.uniform(0.9, 1.1)) for k, v in dropped.items()}
    malformed = rng.randrange(5, 50)
    return {"read": kept + sum(dropped.values()) + malformed, "kept": kept, "dropped": dropped, "malformed": malformed}


def _write(root: Path, name: str, rows: list[dict]) -> Path:
    path = root / f"{name}.parquet"
    with ParquetSink(path, EXAMPLES) as sink:
        for row in rows:
            sink.write(row)
    return path


def _disclosures(path: Path, rows: list[dict], rng: random.Random) -> None:
    """The run's disclosures table: each mask at its place in the text, with an acceptance score."""
    with ParquetSink(path, DISCLOSURES) as sink:
        for row in rows:
            found, pos = [], 0
            for surface, label, pattern in zip(row["surfaces"], row["labels"], row["patterns"]):
                start = row["text"].index(surface, pos)
                pos = start + len(surface)
                found.append({"start": start, "end": pos, "surface": surface, "label": label, "pattern": pattern,
                              "rule": "", "negated": False, "acceptance": rng.uniform(THRESHOLD, 1.0)})
            sink.write({"post_id": row["post_id"], "disclosures": found})


def build(root: Path, n: int, gate: bool) -> Warehouse:
    rng = random.Random(42)
    first = list(synthetic_examples(n, seed=16))
    gone = {r["post_id"] for r in first[::10]}
    second = [r for r in first if r["post_id"] not in gone] + list(synthetic_examples(len(gone), seed=17,
                                                                                      month="2024-02"))
    wh = Warehouse.at(root / "warehouse")
    cfg = replace(GateConfig(), enabled=gate, data_docs=False)
    recipe = replace(Recipe(), gate=cfg, filters=replace(Recipe().filters, scrub_names=False))
    acceptance = {"version": "acceptance-v2", "threshold": THRESHOLD}
    publish_release(_write(root, "v1", first), wh, recipe,
                    {"run_id": "run-bench-1", "funnel": _funnel(len(first), rng), "acceptance": acceptance})
    _disclosures(wh.run("run-bench-2").disclosures, second, rng)
    publish_release(_write(root, "v2", second), wh, recipe,
                    {"run_id": "run-bench-2", "funnel": _funnel(len(second), rng), "acceptance": acceptance})
    return wh


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    ap.add_argument("--examples", type=int, default=30_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gate", action="store_true", help="publish with the quality gate (slower to set up; the "
                    "report then shows the gate's results and PII re-check)")
    ap.add_argument("--keep", type=Path, help="build in this folder and keep it (default: a temporary one)")
    ap.add_argument("--setup-only", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.setup_only:  # in a child, so this process stays small: a child's peak RSS counts its fork
        build(args.setup_only, args.examples, args.gate)
        return
    root = args.keep or Path(tempfile.mkdtemp(prefix="express-bench-report-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, __file__, "--setup-only", str(root), "--examples", str(args.examples)]
                       + (["--gate"] if args.gate else []), check=True)
        wh = Warehouse.at(root / "warehouse")
        setup_s = time.perf_counter() - t0
        out_file = root / "report.html"
        cmd = [sys.executable, "-m", "flows.cli", "report", "--release", "v2",
               "--warehouse", str(wh.root), "--out", str(out_file)]
        runs = []
        for _ in range(args.repeat):
            w0 = time.perf_counter()
            proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            _, status, usage = os.wait4(proc.pid, 0)  # this run's own accounting, not all children's
            wall = time.perf_counter() - w0
            if status:
                raise SystemExit(f"express report failed:\n{proc.stderr.read().decode()}")
            proc.stderr.close()
            runs.append({"wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
                         "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)})
        size = out_file.stat().st_size
        page = out_file.read_text()
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    walls = [r["wall_s"] for r in runs]
    out = {"examples": args.examples, "gate": args.gate, "setup_seconds": round(setup_s, 1),
           "report_wall_seconds_best": min(walls), "report_wall_seconds_median": statistics.median(walls),
           "report_cpu_seconds_best": min(r["cpu_s"] for r in runs), "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
           "report_bytes": size, "report_mb": round(size / 2**20, 2), "charts": page.count("<svg"), "runs": runs}
    print(f"two releases of {args.examples:,} examples published in {setup_s:.1f} s (gate {'on' if args.gate else 'off'})")
    print(f"express report v2 (compared with v1), fresh process, {args.repeat} runs: wall {min(walls):.2f} s best, "
          f"{statistics.median(walls):.2f} s median; CPU {out['report_cpu_seconds_best']:.2f} s best; "
          f"peak RSS {out['peak_rss_mb']} MB")
    print(f"page: {size:,} bytes ({out['report_mb']} MB), {out['charts']} charts, one file")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
