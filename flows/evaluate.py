"""Prefect flow that scores a predictor on one split of a published release, then writes its report.

Only plain values cross the flow boundary: paths, ids and the predictor options (never the API
key, which the predictor reads from the environment inside the task)."""
from __future__ import annotations

from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from evaluation.predictors import PredictorOptions
from evaluation.report import write_report
from evaluation.run import evaluate_release
from warehouse.layout import Warehouse


@task(name="evaluate", cache_policy=NO_CACHE)
def evaluate_task(warehouse: str, release: str, split: str, predictor: str, setting: str,
                  limit: int | None, model: str = "", options: dict[str, Any] | None = None,
                  bootstrap: int = 1000) -> dict[str, Any]:
    opts = PredictorOptions(**{k: v for k, v in (options or {}).items() if k != "api_key"})
    run = evaluate_release(Warehouse.at(warehouse), release, split, predictor, setting, limit,
                           model=model, options=opts, bootstrap=bootstrap)
    return {"run_id": run.run_id, "path": str(run.path), "metrics": run.metrics}


@task(name="evaluation-report", cache_policy=NO_CACHE)
def report_task(run_path: str) -> str:
    return str(write_report(run_path))


@flow(name="express-evaluate")
def evaluate_flow(warehouse: str, release: str, split: str = "test", predictor: str = "most-frequent",
                  setting: str = "zero-shot", limit: int | None = None, model: str = "",
                  options: dict[str, Any] | None = None, bootstrap: int = 1000, report: bool = True) -> dict[str, Any]:
    out = evaluate_task(warehouse, release, split, predictor, setting, limit, model, options, bootstrap)
    if report:
        out["report"] = report_task(out["path"])
    return out
