"""What `express evaluate` and `express sweep` run: a predictor scored on one split of a published
release (then the probe of what the model memorized, when asked, and the run's report), and a grid
of such runs. The CLI reports each to Prefect as a flow when an API is configured (flows/reported.py).

A run is asked as `EvalRequest.params()`: plain values (a flow run's parameters), never the API key,
which the predictor reads from the environment. A probe runs only after every answer it could touch
is stored (evaluation/live/probe.py)."""
from __future__ import annotations

from typing import Any

from evaluation.live.probe import probe_run
from evaluation.outputs.report import write_report
from evaluation.run import EvalRequest, evaluate_release
from warehouse.layout import Warehouse


def _evaluate(warehouse: str, release: str, request: dict[str, Any]) -> dict[str, Any]:
    """One stored run."""
    run = evaluate_release(Warehouse.at(warehouse), release, EvalRequest.from_params(request))
    return {"run_id": run.run_id, "path": str(run.path), "metrics": run.metrics, "window": run.window}


def _probing(request: dict[str, Any]) -> bool:
    return bool((request.get("live") or {}).get("probe"))


def evaluate(warehouse: str, release: str, request: dict[str, Any] | None = None,
             report: bool = True) -> dict[str, Any]:
    request = request or EvalRequest().params()
    out = _evaluate(warehouse, release, request)
    if _probing(request):
        probe_run(Warehouse.at(warehouse), out["path"])
    if report:
        out["report"] = str(write_report(out["path"]))
    return out


def sweep(warehouse: str, release: str, request: dict[str, Any], cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One run per cell ({setting, variant, temperature}), one after another: each run already
    keeps the server busy with its own concurrency, and shares the response cache. Probes run
    after the last cell, so no cell is answered after the model was shown an unmasked text."""
    out = []
    for cell in cells:
        options = {**request["options"], "setting": cell["setting"], "temperature": cell["temperature"],
                   "prompt_variant": cell["variant"]}
        out.append({"cell": cell, **_evaluate(warehouse, release, {**request, "options": options})})
    if _probing(request):
        for run in out:
            probe_run(Warehouse.at(warehouse), run["path"])
    return out
