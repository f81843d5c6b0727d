"""The takedown flows: apply the ledger to the warehouse (takedowns/apply.py), publishing each next
version as a build publishes a run (flows/build.py's publish task and the runtime's gate runner),
and sync the ledger with Reddit (takedowns/sync.py)."""
from __future__ import annotations

from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows import runtime
from flows.build import publish_task
from pipeline import steps
from pipeline.run import run_lock
from takedowns.release import TakedownStep, manifest_extra, open_takedown_run
from schemas.config import SourcesConfig
from takedowns.apply import apply_takedowns
from takedowns.sync import sync
from warehouse.layout import Warehouse
from warehouse.releases.release import Release
from warehouse.ledgers.takedowns import TakedownSet

sync_task = task(sync, name="takedown-sync", cache_policy=NO_CACHE)


def _publisher(wh: Warehouse) -> Any:
    def publish(parent: Release, taken: TakedownSet) -> str:
        unit = open_takedown_run(wh, parent, taken)
        with run_lock(unit.run):
            assembled = steps.run_step(TakedownStep, unit, str(unit.run.recipe), runtime.around_setup)
            published = publish_task(wh, unit.run, assembled, manifest_extra(unit, taken))
        print(f"[takedown] {parent.release_id} -> {published.release_id} without the taken-down rows", flush=True)
        return published.release_id

    return publish


@flow(name="express-takedown-apply", validate_parameters=False)
def apply_flow(warehouse: str, purge_releases: bool = False) -> dict[str, Any]:
    """Honour the takedown ledger in every file of the warehouse; returns what was done."""
    wh = Warehouse.at(warehouse)
    return apply_takedowns(wh, _publisher(wh), purge_releases).to_dict()


@flow(name="express-takedown-sync", validate_parameters=False)
def sync_flow(warehouse: str, sources: SourcesConfig, datasets: list[str] | None = None) -> dict[str, Any]:
    """Add to the ledger the posts of the latest releases that Reddit shows deleted or removed."""
    synced = sync_task(Warehouse.at(warehouse), sources, datasets)
    return {"asked": synced.asked, "gone": synced.gone, "ledger_version": synced.version}
