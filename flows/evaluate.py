"""Prefect flow that scores a predictor on one split of a published release."""
from __future__ import annotations

from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from evaluation.run import evaluate_release
from warehouse.layout import Warehouse


@task(name="evaluate", cache_policy=NO_CACHE)
def evaluate_task(warehouse: str, release: str, split: str, predictor: str, setting: str,
                  limit: int | None) -> dict[str, Any]:
    run = evaluate_release(Warehouse.at(warehouse), release, split, predictor, setting, limit)
    return {"run_id": run.run_id, "path": str(run.path), "metrics": run.metrics}


@flow(name="express-evaluate")
def evaluate_flow(warehouse: str, release: str, split: str = "test", predictor: str = "most-frequent",
                  setting: str = "zero-shot", limit: int | None = None) -> dict[str, Any]:
    return evaluate_task(warehouse, release, split, predictor, setting, limit)
