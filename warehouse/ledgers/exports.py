"""Copies the project wrote outside the warehouse: a card folder, an lm-eval task folder, review items,
a scrubbed file or a report written with `--out` elsewhere. Each is recorded here when written (an
append-only batch folder, `<warehouse>/exports/`, as the ledgers are), so `express takedown apply`
can name those that still hold a taken-down post (they are the user's to delete) and `express
takedown verify --outside` can read them."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from common.batches import BatchFolder
from common.errors import UserError
from warehouse.layout import Warehouse


class ExportsError(UserError, ValueError):
    """The record of copies cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class Export:
    path: str  # absolute: a file or a folder
    command: str  # what wrote it: card, report, export lm-eval, review export, scrub
    release: str = ""
    time: str = ""


def _entry(row: Any, where: str) -> Export:
    if not isinstance(row, dict) or not row.get("path") or not row.get("command"):
        raise ExportsError(f"{where}: an export line needs a path and a command")
    return Export(str(row["path"]), str(row["command"]), str(row.get("release", "")), str(row.get("time", "")))


def _record(wh: Warehouse) -> BatchFolder:
    return BatchFolder(wh.exports, wh.exports / ".lock", ExportsError, "export record", "another export")


def record_export(wh: Warehouse, path: str | Path, command: str, release: str = "") -> bool:
    """Note a copy written outside the warehouse (one inside it is the warehouse's own); returns
    whether it was recorded."""
    where = Path(path).expanduser().resolve()
    if where == wh.root or where.is_relative_to(wh.root):
        return False
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    _record(wh).append_rows([asdict(Export(str(where), command, release, stamp))], _entry)
    return True


def recorded_exports(wh: Warehouse) -> list[Export]:
    """Every copy recorded, once per path (its latest writing), in the order first written."""
    latest: dict[str, Export] = {}
    for _, entries in _record(wh).parsed(_entry):
        for e in entries:
            latest[e.path] = e
    return list(latest.values())
