"""What is written about a published release: its data-quality report and its dataset card, each
with the release's hand-review figures (review/ computes them; warehouse/ only renders)."""
from __future__ import annotations

from pathlib import Path

from review.stats import release_review
from warehouse.layout import Warehouse
from warehouse.publish import Release
from warehouse.report import docs_link_for, render_report


def write_report(wh: Warehouse, release: str, out: str | Path | None = None) -> Path:
    """The HTML data-quality page of `release` (VERSION or DATASET/VERSION); default path in the warehouse."""
    rel = Release.find(wh, release)
    path = Path(out) if out else wh.report_path(rel.dataset, rel.version)
    return render_report(rel, path, docs_link_for(rel, path), review=release_review(rel))


CARD_REPORT = "report.html"  # the data-quality report inside a card folder, which the card links


def write_card(wh: Warehouse, release: str, out_dir: str | Path, url: str = "") -> dict[str, Path]:
    """A Hugging Face dataset folder of `release`: README.md card linking its data-quality report
    (report.html, self-contained, so it travels with the folder), data/*.parquet, croissant.json."""
    from warehouse.card import export_card  # Hugging Face and Croissant: not loaded to write a report

    rel = Release.find(wh, release)
    review = release_review(rel)
    report = render_report(rel, Path(out_dir) / CARD_REPORT, docs_link=None, review=review)
    return {**export_card(rel, Path(out_dir), url=url, review=review, report=CARD_REPORT), "report": report}
