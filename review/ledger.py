"""The review ledger: append-only, versioned, crash-safe, under `<warehouse>/reviews/<dataset>/`.

Each append is one immutable batch file `ledger/NNNNNN.jsonl`, written to a temporary file,
fsynced and linked into place under a lock (never overwritten, never half written). Version N of
the ledger is batches 1..N; its sha256 is the hash of their bytes in order, so a build can record
exactly which decisions it used. A later line by the same reviewer on the same item supersedes an
earlier one (ledger order, not clock time); `retract` withdraws the reviewer's decision (undo).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from common.batches import BatchFolder, record_from_json
from common.batches import now as batch_time
from warehouse.layout import Warehouse

SCHEMA = "express-review-ledger/1"
VERDICTS = ("accept", "reject")
DECISIONS = (*VERDICTS, "skip", "retract")


class LedgerError(ValueError):
    """A ledger or items file that cannot be read; the message names the file and line."""


def now() -> str:
    return batch_time("microseconds")  # decisions made a moment apart keep their order


@dataclass(frozen=True)
class Entry:
    """One ledger line: a reviewer's decision on an item, with the item's identity."""

    item_id: str
    decision: str
    reviewer: str
    time: str
    source: str
    dataset: str
    post_id: str
    surface: str
    occurrence: int
    occurrences: int
    left: list[str] = field(default_factory=list)
    right: list[str] = field(default_factory=list)
    pattern: str = ""
    rule: str = ""
    label: str = ""
    negated: bool | None = None
    release: str = ""
    schema: str = SCHEMA

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


_REQUIRED = ("item_id", "decision", "reviewer", "time", "source", "dataset", "post_id", "surface",
             "occurrence", "occurrences")


def entry_from_json(row: Any, where: str) -> Entry:
    return record_from_json(Entry, row, where, LedgerError, SCHEMA, "ledger", _REQUIRED, {"decision": DECISIONS})


class Ledger(BatchFolder):
    """The decisions of one dataset. Cheap to create; reads the batch files on demand."""

    def __init__(self, root: str | Path, dataset: str):
        self.root = Path(root)
        self.dataset = dataset
        paths = Warehouse(self.root).review(dataset)
        self.dir = paths.ledger
        super().__init__(self.dir, paths.ledger_lock, LedgerError, "ledger",
                         "another review writer")

    def append(self, entries: Iterable[Entry]) -> int:
        """Add one batch holding `entries` (all or none); returns the new ledger version."""
        return self.append_rows([e.to_json() for e in entries], entry_from_json)

    def read(self, version: int | None = None, since: int = 0) -> list[Entry]:
        """Entries of batches since+1 .. version (default: all), in ledger order."""
        return [e for _, entries in self.parsed(entry_from_json, version, since) for e in entries]


def latest_by_reviewer(entries: Iterable[Entry]) -> dict[str, dict[str, Entry]]:
    """item_id -> reviewer -> that reviewer's standing decision (accept, reject or skip)."""
    out: dict[str, dict[str, Entry]] = {}
    for e in entries:
        per = out.setdefault(e.item_id, {})
        if e.decision == "retract":
            per.pop(e.reviewer, None)
        else:
            per[e.reviewer] = e
    return {k: v for k, v in out.items() if v}


def consensus(by_reviewer: dict[str, Entry]) -> str | None:
    """One verdict per item: the majority of accept/reject; a tie rejects (a doubtful mask is not a
    label). Skips do not vote; None when nobody decided."""
    votes = [e.decision for e in by_reviewer.values() if e.decision in VERDICTS]
    if not votes:
        return None
    rejects = votes.count("reject")
    return "reject" if rejects * 2 >= len(votes) else "accept"


def datasets_with_reviews(root: Path) -> list[str]:
    base = Warehouse(Path(root)).reviews
    return sorted(p.name for p in base.iterdir() if (p / "ledger").is_dir()) if base.is_dir() else []
