"""What is written about a published release: its data-quality report and its dataset card, each
with the release's hand-review figures (review/ computes them; warehouse/ only renders)."""
from __future__ import annotations

from pathlib import Path

from review.stats import release_review
from warehouse.card import export_card
from warehouse.layout import Warehouse
from warehouse.publish import Release
from warehouse.report import docs_link_for, render_report


def write_report(wh: Warehouse, release: str, out: str | Path | None = None) -> Path:
    """The HTML data-quality page of `release` (VERSION or DATASET/VERSION); default path in the warehouse."""
    rel = Release.find(wh, release)
    path = Path(out) if out else wh.report_path(rel.dataset, rel.version)
    return render_report(rel, path, docs_link_for(rel, path), review=release_review(rel))


def write_card(wh: Warehouse, release: str, out_dir: str | Path, url: str = "") -> dict[str, Path]:
    """A Hugging Face dataset folder of `release`: README.md card, data/*.parquet, croissant.json."""
    rel = Release.find(wh, release)
    return export_card(rel, Path(out_dir), url=url, review=release_review(rel))
