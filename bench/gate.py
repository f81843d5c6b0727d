"""Benchmark of the quality gate and the publish at realistic size.

Builds a release's examples file from sources/synthetic.py (posts of 100-300 words, every one
with a disclosure: what a 300,000-post build hands to publish), publishes it with the gate on
(default recipe: Data Docs too), then runs the gate once more on the published split files to
time it alone. Wall seconds and CPU seconds of this process (the machine is shared), and the
process's peak RSS. Prints the figures, then one JSON line.

    .venv/bin/python bench/gate.py [--examples 25000] [--chunk-mb 16] [--no-data-docs] [--keep DIR]
"""
from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psutil  # noqa: E402

from common.parquet import ParquetSink  # noqa: E402
from schemas.config import GateConfig, Recipe  # noqa: E402
from schemas.records import EXAMPLES  # noqa: E402
from sources.synthetic import synthetic_examples  # noqa: E402
from warehouse.gate.suite import run_gate  # noqa: E402
from warehouse.gate.gx import import_gx  # noqa: E402
from warehouse.layout import Warehouse  # noqa: E402
from warehouse.releases.publish import publish_release  # noqa: E402


def _mb(n: float) -> float:
    return round(n / 2**20, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    ap.add_argument("--examples", type=int, default=25_000)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--chunk-mb", type=float, default=GateConfig.chunk_mb)
    ap.add_argument("--no-data-docs", action="store_true", help="skip rendering GX Data Docs")
    ap.add_argument("--no-names", action="store_true", help="the gate checks the structured PII kinds only "
                    "(the synthetic rows were never scrubbed; NER reads some of their places as names)")
    ap.add_argument("--keep", type=Path, help="build in this folder and keep it (default: a temporary one)")
    args = ap.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="express-bench-gate-"))
    root.mkdir(parents=True, exist_ok=True)
    proc = psutil.Process()
    try:
        t0 = time.perf_counter()
        src, chars = root / "examples.parquet", 0
        with ParquetSink(src, EXAMPLES) as sink:
            for row in synthetic_examples(args.examples, seed=args.seed):
                chars += len(row["text"])
                sink.write(row)
        make_s = time.perf_counter() - t0
        import_gx()  # its ~200 MB of code are not the gate's memory

        gate_cfg = replace(GateConfig(), chunk_mb=args.chunk_mb, data_docs=not args.no_data_docs)
        # synthetic rows were never scrubbed; the small NER model reads some places and typos as names
        recipe = replace(Recipe(), gate=gate_cfg, filters=replace(Recipe().filters, scrub_names=not args.no_names))
        rss_before = proc.memory_info().rss

        w0, c0 = time.perf_counter(), time.process_time()
        release = publish_release(src, Warehouse.at(root / "warehouse"), recipe, {})
        publish_s, publish_cpu = time.perf_counter() - w0, time.process_time() - c0
        peak_publish = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

        w0, c0 = time.perf_counter(), time.process_time()
        gate = run_gate(release.split_files(), gate_cfg, root / "gate-again")
        gate_s, gate_cpu = time.perf_counter() - w0, time.process_time() - c0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        manifest = release.manifest()
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)

    out = {
        "examples": args.examples,
        "text_mb": _mb(chars),
        "mean_text_chars": round(chars / args.examples),
        "gate_passed": bool(gate.success and manifest["gate"]["success"]),
        "gate_seconds": round(gate_s, 2),
        "gate_cpu_seconds": round(gate_cpu, 2),
        "publish_seconds": round(publish_s, 2),
        "publish_cpu_seconds": round(publish_cpu, 2),
        "peak_rss_mb": _mb(peak),
        "rss_before_publish_mb": _mb(rss_before),
        "publish_rss_growth_mb": _mb(peak_publish - rss_before),
        "chunk_mb": args.chunk_mb,
        "chunks": gate.summary.get("chunks"),
        "duckdb_memory_mb": gate.summary.get("duckdb_memory_mb"),
        "data_docs": gate_cfg.data_docs,
        "rows": manifest["rows"],
    }
    print(f"release rows: {args.examples:,} examples, {out['text_mb']} MB of text "
          f"({out['mean_text_chars']} chars per example), built in {make_s:.1f} s")
    print(f"publish (split + gate + manifest): {publish_s:.1f} s wall, {publish_cpu:.1f} s CPU; "
          f"gate alone: {gate_s:.1f} s wall, {gate_cpu:.1f} s CPU; passed: {out['gate_passed']}")
    print(f"memory: RSS {out['rss_before_publish_mb']} MB before publishing (GX imported), peak "
          f"{out['peak_rss_mb']} MB (+{out['publish_rss_growth_mb']} MB while publishing); DuckDB limit "
          f"{out['duckdb_memory_mb']} MB; GX chunks {out['chunks']}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
