"""Copies outside the warehouse (warehouse/ledgers/exports.py) that still hold a taken-down post. The project
never deletes what it wrote outside the warehouse: apply and verify name them for the user."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from common.matching.takedowns import TakedownMatcher
from takedowns.files import file_hits
from warehouse.ledgers.exports import recorded_exports
from warehouse.layout import Warehouse


def outside_files(wh: Warehouse) -> Iterator[Path]:
    """Every file of the recorded copies that still exists."""
    for export in recorded_exports(wh):
        path = Path(export.path)
        if path.is_dir():
            yield from (p for p in sorted(path.rglob("*")) if p.is_file())
        elif path.is_file():
            yield path


def outside_hits(wh: Warehouse, matcher: TakedownMatcher) -> list[tuple[Path, str]]:
    """(file, where in it) of each recorded copy holding a taken-down post."""
    if not matcher:
        return []
    return [(p, where) for p in dict.fromkeys(outside_files(wh)) if (where := file_hits(p, matcher)) is not None]
