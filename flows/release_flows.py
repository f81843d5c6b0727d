"""Prefect flows for what is done with a published release: the data-quality report and the
dataset card export. Each is usable alone (by release id) and only wires warehouse/ functions."""
from __future__ import annotations

from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from warehouse.layout import Warehouse


@task(name="render-report", cache_policy=NO_CACHE)
def report_task(warehouse: str, release: str, out: str | None = None) -> str:
    from warehouse.publish import Release
    from warehouse.report import default_report_path, docs_link_for, render_report

    wh = Warehouse.at(warehouse)
    rel = Release.find(wh, release)
    path = Path(out) if out else default_report_path(wh.root, rel)
    return str(render_report(rel, path, docs_link_for(rel, path)))


@task(name="export-card", cache_policy=NO_CACHE, retries=1)
def card_task(warehouse: str, release: str, out_dir: str, url: str = "") -> dict[str, str]:
    from warehouse.card import export_card
    from warehouse.publish import Release

    rel = Release.find(Warehouse.at(warehouse), release)
    return {k: str(v) for k, v in export_card(rel, Path(out_dir), url=url).items()}


@flow(name="express-report")
def report_flow(warehouse: str, release: str, out: str | None = None) -> str:
    """Write the HTML data-quality page of a release; returns its path."""
    return report_task(warehouse, release, out)


@flow(name="express-card")
def card_flow(warehouse: str, release: str, out_dir: str, url: str = "") -> dict[str, str]:
    """Export a release as a Hugging Face dataset folder (card, data, Croissant); returns the paths."""
    return card_task(warehouse, release, out_dir, url)
