"""What is written about a published release: its data-quality report and its dataset card, each
with the release's hand-review figures (review/ computes them; warehouse/ only renders)."""
from __future__ import annotations

from pathlib import Path

import shutil
from typing import Any

from common.files import write_atomic
from review.stats import release_review
from warehouse.ledgers.exports import record_export
from warehouse.layout import CardPaths, Warehouse
from warehouse.releases.release import Release
from warehouse.pages.report import docs_link_for, render_report
from warehouse.ledgers.withdrawn import notice_card, notice_html


def write_report(wh: Warehouse, release: str, out: str | Path | None = None) -> Path:
    """The HTML data-quality page of `release` (VERSION or DATASET/VERSION); default path in the
    warehouse. A withdrawn release's page is its withdrawal notice: the report showed its rows."""
    rel = Release.find(wh, release)
    path = Path(out) if out else wh.report_path(rel.dataset, rel.version)
    if (record := rel.withdrawn) is not None:
        write_atomic(path, notice_html(rel.release_id, record).encode())
    else:
        render_report(rel, path, docs_link_for(rel, path), review=release_review(rel))
    record_export(wh, path, "report", rel.release_id)
    return path


def write_card(wh: Warehouse, release: str, out_dir: str | Path, url: str = "") -> dict[str, Path]:
    """A Hugging Face dataset folder of `release`: README.md card linking its data-quality report
    (report.html, self-contained, so it travels with the folder), data/*.parquet, croissant.json."""
    from warehouse.pages.card import export_card  # Hugging Face and Croissant: not loaded to write a report

    rel = Release.find(wh, release)
    card = CardPaths(Path(out_dir))
    if (record := rel.withdrawn) is not None:  # the notice, no data: the card folder may already be on a hub
        written = write_withdrawn_card(card, rel.release_id, record)
    else:
        review = release_review(rel)
        report = render_report(rel, card.report, docs_link=None, review=review)
        written = {**export_card(rel, card, url=url, review=review, linked_report=True), "report": report}
    record_export(wh, card.root, "card", rel.release_id)
    return written


def write_withdrawn_card(card: CardPaths, release_id: str, record: dict[str, Any]) -> dict[str, Path]:
    """A withdrawn release's card folder: the notice as its card and its report, no data files."""
    shutil.rmtree(card.data, ignore_errors=True)
    card.croissant.unlink(missing_ok=True)
    write_atomic(card.readme, notice_card(release_id, record).encode())
    write_atomic(card.report, notice_html(release_id, record).encode())
    return {"readme": card.readme, "report": card.report}
