"""Evaluate a predictor on one split of a published release and store the run.

A run folder holds config.json, predictions.jsonl (one row per example: gold, answer, parsed)
and metrics.json, so every number can be traced back to the answers that produced it.
"""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from schemas.lexicon import Decomposition, default_decomposition

from evaluation.metrics import score_row, aggregate
from evaluation.parsing import parse_answer
from evaluation.predictors import get_predictor
from warehouse.layout import Warehouse
from warehouse.parquet import iter_rows
from warehouse.publish import Release


@dataclass(frozen=True)
class EvalRun:
    run_id: str
    path: Path
    metrics: dict[str, Any]


def load_release(warehouse: Warehouse, version: str) -> Release:
    path = warehouse.find_release(version)
    return Release(path.parent.name, path.name, path)


def evaluate_release(
    warehouse: Warehouse,
    version: str,
    split: str = "test",
    predictor: str = "most-frequent",
    setting: str = "zero-shot",
    limit: int | None = None,
    decomposition: Decomposition | None = None,
) -> EvalRun:
    release = load_release(warehouse, version)
    dec = decomposition or default_decomposition()
    model = get_predictor(predictor)
    model.fit(iter_rows(release.split_file("train")))
    run_id = f"{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{predictor}-{uuid.uuid4().hex[:6]}"
    out = warehouse.evaluation_dir(run_id)
    out.mkdir(parents=True)
    scores = []
    with open(out / "predictions.jsonl", "w", encoding="utf-8") as fh:
        for n, row in enumerate(iter_rows(release.split_file(split))):
            if limit is not None and n >= limit:
                break
            answer = model.predict(row)
            parsed = parse_answer(answer)
            gold = list(row["surfaces"])
            scores.append(score_row(gold, parsed, dec))
            fh.write(json.dumps({"post_id": row["post_id"], "segment_index": row["segment_index"],
                                 "labels": gold, "output": answer, "parsed": parsed}) + "\n")
    metrics = aggregate(scores)
    config = {"release": f"{release.dataset}/{release.version}", "split": split, "predictor": predictor,
              "setting": setting, "limit": limit, "created": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    return EvalRun(run_id, out, metrics)
