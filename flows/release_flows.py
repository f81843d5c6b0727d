"""What is done with a published release: the data-quality report and the dataset card export,
by release id (pipeline/release_docs.py): plain Python, reported to Prefect as a flow when an API
is configured (flows/reported.py)."""
from __future__ import annotations

from pipeline import release_docs
from flows.reported import reported
from warehouse.layout import Warehouse


@reported("express-report")
def report_flow(warehouse: str, release: str, out: str | None = None) -> str:
    """Write the HTML data-quality page of a release; returns its path."""
    return str(release_docs.write_report(Warehouse.at(warehouse), release, out))


@reported("express-card")
def card_flow(warehouse: str, release: str, out_dir: str, url: str = "") -> dict[str, str]:
    """Export a release as a Hugging Face dataset folder (card, data, Croissant); returns the paths."""
    written = release_docs.write_card(Warehouse.at(warehouse), release, out_dir, url)
    return {k: str(v) for k, v in written.items()}
