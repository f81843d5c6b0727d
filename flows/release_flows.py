"""Prefect flows for what is done with a published release: the data-quality report and the
dataset card export. Each is usable alone (by release id) and only wires pipeline/release_docs.py."""
from __future__ import annotations

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from pipeline import release_docs
from warehouse.layout import Warehouse


@task(name="render-report", cache_policy=NO_CACHE)
def report_task(warehouse: str, release: str, out: str | None = None) -> str:
    return str(release_docs.write_report(Warehouse.at(warehouse), release, out))


@task(name="export-card", cache_policy=NO_CACHE, retries=1)
def card_task(warehouse: str, release: str, out_dir: str, url: str = "") -> dict[str, str]:
    written = release_docs.write_card(Warehouse.at(warehouse), release, out_dir, url)
    return {k: str(v) for k, v in written.items()}


@flow(name="express-report")
def report_flow(warehouse: str, release: str, out: str | None = None) -> str:
    """Write the HTML data-quality page of a release; returns its path."""
    return report_task(warehouse, release, out)


@flow(name="express-card")
def card_flow(warehouse: str, release: str, out_dir: str, url: str = "") -> dict[str, str]:
    """Export a release as a Hugging Face dataset folder (card, data, Croissant); returns the paths."""
    return card_task(warehouse, release, out_dir, url)
