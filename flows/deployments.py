"""The weekly rebuild as a Prefect deployment; the schedule comes from the recipe's [orchestrate].

`rebuild_deployment(...)` builds the deployment object without a server (tests check its
schedule); `express schedule` serves it against a running `prefect server start`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow
from prefect.deployments.runner import RunnerDeployment
from prefect.schedules import Cron

from flows.rebuild import rebuild_flow
from flows.takedown import apply_flow, sync_flow
from pipeline.plan import BuildRequest, plan_build
from pipeline.run import load_any_recipe
from warehouse.layout import Warehouse

DEPLOYMENT_NAME = "weekly-rebuild"


@flow(name="express-scheduled-rebuild")
def scheduled_rebuild_flow(inputs: list[str], warehouse: str, config: str | None = None,
                           scrape: bool = False) -> dict[str, Any]:
    """One scheduled rebuild: planned when it runs (a watched folder holds new dumps by then). With
    [orchestrate] sync_takedowns, Reddit is asked first which posts of the latest releases are gone;
    the rebuild drops them, and when any was, the takedowns are applied after it."""
    plan = plan_build(BuildRequest(warehouse, inputs, config, scrape=scrape))
    dataset, gone = plan.recipe.dataset.name, []
    if plan.recipe.orchestrate.sync_takedowns and plan.wh.versions(dataset):
        gone = sync_flow(str(plan.wh.root), plan.recipe.sources, [dataset])["gone"]
    out = rebuild_flow(plan).to_dict()
    if gone:
        out["takedowns"] = apply_flow(str(plan.wh.root))
    return out


def rebuild_deployment(inputs: list[str], warehouse: str | None = None, config: str | None = None,
                       name: str = DEPLOYMENT_NAME, scrape: bool = False) -> RunnerDeployment:
    """The incremental rebuild of `inputs` (and, with scrape, new praw results) on the recipe's cron schedule."""
    recipe = load_any_recipe(config)
    o = recipe.orchestrate
    params = {"inputs": [str(Path(p).resolve()) for p in inputs], "warehouse": str(Warehouse.at(warehouse).root),
              "config": str(Path(config).resolve()) if config else None, "scrape": scrape}
    return scheduled_rebuild_flow.to_deployment(
        name=name,
        schedule=Cron(o.cron, timezone=o.timezone),
        parameters=params,
        description=f"Incremental rebuild of {recipe.dataset.name}: new dumps only, new version names its parent.",
        tags=["express", "rebuild"],
    )
