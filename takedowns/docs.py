"""Reports and cards after a takedown: those of a withdrawn release become short notices (they
showed its examples; a card folder also held its data files), and its successor gets a report and a
card where the withdrawn release had them, to publish in their place (docs/takedowns.md)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from common.files import write_atomic
from pipeline.release_docs import write_card, write_report, write_withdrawn_card
from warehouse.layout import CardPaths, Warehouse
from warehouse.ledgers.withdrawn import notice_html


def _card_url(card: CardPaths) -> str:
    """The dataset URL the card was exported with (its Croissant file says), to export the next alike."""
    try:
        return str(json.loads(card.croissant.read_text()).get("url") or "") if card.croissant.exists() else ""
    except (OSError, json.JSONDecodeError):
        return ""


def rewrite_docs(wh: Warehouse, withdrawn: dict[str, dict[str, Any]]) -> list[str]:
    """For each withdrawn release (id -> its withdrawal record): notices in place of its report and
    card, and its successor's report and card where it had them; returns the paths written."""
    written = []
    for release_id, record in sorted(withdrawn.items()):
        dataset, version = release_id.split("/", 1)
        report, card = wh.report_path(dataset, version), CardPaths(wh.card_dir(dataset, version))
        had_report, had_card = report.exists(), card.root.is_dir()
        url = _card_url(card) if had_card else ""
        if had_report:
            write_atomic(report, notice_html(release_id, record).encode())
            written.append(str(report))
        if had_card:
            write_withdrawn_card(card, release_id, record)
            written.append(str(card.root))
        successor = record.get("successor")
        if successor:
            s_dataset, s_version = successor.split("/", 1)
            if had_report and not wh.report_path(s_dataset, s_version).exists():
                written.append(str(write_report(wh, successor)))
            if had_card and not CardPaths(wh.card_dir(s_dataset, s_version)).readme.exists():
                write_card(wh, successor, wh.card_dir(s_dataset, s_version), url)
                written.append(str(wh.card_dir(s_dataset, s_version)))
    return written
