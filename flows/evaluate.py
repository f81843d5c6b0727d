"""Prefect flows that score a predictor on one split of a published release (then probe what the
model memorized, when asked, and write its report), and run a grid of such runs (`express sweep`).

Only plain values cross the flow boundary: paths, ids, the predictor options and the run's window,
cutoff and probe fields (never the API key, which the predictor reads from the environment inside
the task). A probe runs only after every answer it could touch is stored (evaluation/live/probe.py)."""
from __future__ import annotations

from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from evaluation.predictors.base import PredictorOptions
from evaluation.live.probe import probe_run
from evaluation.outputs.report import write_report
from evaluation.run import EvalRequest, evaluate_release
from schemas.config import LiveFields
from warehouse.layout import Warehouse


@task(name="evaluate", cache_policy=NO_CACHE)
def evaluate_task(warehouse: str, release: str, split: str, predictor: str, setting: str,
                  limit: int | None, model: str = "", options: dict[str, Any] | None = None,
                  bootstrap: int = 1000, live: dict[str, Any] | None = None) -> dict[str, Any]:
    given = {k: v for k, v in (options or {}).items() if k != "api_key"}
    opts = PredictorOptions(**{**given, "setting": setting, "model": model or given.get("model", "")})
    run = evaluate_release(Warehouse.at(warehouse), release,
                           EvalRequest(predictor, split, opts, LiveFields(**(live or {})), limit, bootstrap))
    return {"run_id": run.run_id, "path": str(run.path), "metrics": run.metrics, "window": run.window}


@task(name="probe", cache_policy=NO_CACHE)
def probe_task(warehouse: str, run_path: str) -> None:
    probe_run(Warehouse.at(warehouse), run_path)


@task(name="evaluation-report", cache_policy=NO_CACHE)
def report_task(run_path: str) -> str:
    return str(write_report(run_path))


@flow(name="express-evaluate")
def evaluate_flow(warehouse: str, release: str, split: str = "test", predictor: str = "most-frequent",
                  setting: str = "zero-shot", limit: int | None = None, model: str = "",
                  options: dict[str, Any] | None = None, bootstrap: int = 1000, report: bool = True,
                  live: dict[str, Any] | None = None) -> dict[str, Any]:
    out = evaluate_task(warehouse, release, split, predictor, setting, limit, model, options, bootstrap, live)
    if (live or {}).get("probe"):
        probe_task(warehouse, out["path"])
    if report:
        out["report"] = report_task(out["path"])
    return out


@flow(name="express-sweep")
def sweep_flow(warehouse: str, release: str, split: str, predictor: str, cells: list[dict[str, Any]],
               limit: int | None = None, model: str = "", options: dict[str, Any] | None = None,
               bootstrap: int = 1000, live: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One evaluate task per cell ({setting, variant, temperature}), one after another: each run
    already keeps the server busy with its own concurrency, and shares the response cache. Probes
    run after the last cell, so no cell is answered after the model was shown an unmasked text."""
    out = []
    for cell in cells:
        cell_options = {**(options or {}), "temperature": cell["temperature"], "prompt_variant": cell["variant"]}
        run = evaluate_task(warehouse, release, split, predictor, cell["setting"], limit, model, cell_options,
                            bootstrap, live)
        out.append({"cell": cell, **run})
    if (live or {}).get("probe"):
        for run in out:
            probe_task(warehouse, run["path"])
    return out
