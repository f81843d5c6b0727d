"""One review session over a queue of items: what to show next, decide, undo, progress.

All state is in the ledger (each decision is a batch the moment it is made), so a session
resumes where it stopped after a restart, and undo works across restarts too.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from review.items import ReviewItem
from review.ledger import Entry, Ledger, now
from review.stats import Precision

MAX_REVIEWER = 80


class SessionError(ValueError):
    """A request the session refuses (unknown item, bad decision, no reviewer name)."""


class ReviewSession:
    def __init__(self, root: Path, dataset: str, release_id: str, items: list[ReviewItem]):
        self.release_id = release_id
        self.items = items
        self.by_id = {it.item_id: it for it in items}
        self.ledger = Ledger(root, dataset)
        self._entries: list[Entry] = []
        self._loaded = 0

    def _refresh(self) -> None:
        """Read only the batches written since the last call (another writer may append too)."""
        version = self.ledger.version
        if version > self._loaded:
            self._entries.extend(self.ledger.read(version, since=self._loaded))
            self._loaded = version

    def _history(self, reviewer: str) -> dict[str, Entry]:
        """This reviewer's standing decisions on the queue's items, in the order they were made."""
        standing: dict[str, Entry] = {}
        for e in self._entries:
            if e.reviewer != reviewer or e.item_id not in self.by_id:
                continue
            standing.pop(e.item_id, None)
            if e.decision != "retract":
                standing[e.item_id] = e
        return standing

    @staticmethod
    def _reviewer(name: Any) -> str:
        if not isinstance(name, str) or not name.strip():
            raise SessionError("enter your name as reviewer first")
        name = " ".join(name.split())
        if len(name) > MAX_REVIEWER:
            raise SessionError(f"reviewer name longer than {MAX_REVIEWER} characters")
        return name

    def state(self, reviewer: str | None) -> dict[str, Any]:
        self._refresh()
        name = reviewer.strip() if isinstance(reviewer, str) else ""
        standing = self._history(name) if name else {}
        verdicts = [e.decision for e in standing.values()]
        p = Precision.of(verdicts)
        current = next(((i, it) for i, it in enumerate(self.items) if it.item_id not in standing), None)
        last = list(standing.values())[-1] if standing else None
        return {
            "release": self.release_id, "reviewer": name, "total": len(self.items), "done": len(standing),
            "accepted": p.accepted, "rejected": p.rejected, "skipped": verdicts.count("skip"),
            "precision": p.precision, "low": p.low, "high": p.high, "ledger_version": self._loaded,
            "can_undo": last is not None,
            "last": {"item_id": last.item_id, "surface": last.surface, "decision": last.decision} if last else None,
            "item": _show(current[1], current[0]) if current else None,
        }

    def decide(self, reviewer: Any, item_id: Any, decision: Any) -> dict[str, Any]:
        name = self._reviewer(reviewer)
        if decision not in ("accept", "reject", "skip"):
            raise SessionError(f"decision must be accept, reject or skip, not {decision!r}")
        item = self.by_id.get(item_id) if isinstance(item_id, str) else None
        if item is None:
            raise SessionError(f"item {item_id!r} is not in this review")
        self.ledger.append([_entry(item, decision, name, f"serve:{self.release_id}")])
        return self.state(name)

    def undo(self, reviewer: Any) -> dict[str, Any]:
        """Withdraw this reviewer's latest standing decision (a `retract` line: nothing is erased)."""
        name = self._reviewer(reviewer)
        self._refresh()
        standing = self._history(name)
        if not standing:
            raise SessionError("nothing to undo")
        last = list(standing.values())[-1]
        self.ledger.append([_entry(self.by_id[last.item_id], "retract", name, f"serve:{self.release_id}")])
        return self.state(name)


def _entry(item: ReviewItem, decision: str, reviewer: str, source: str) -> Entry:
    ident = item.identity()
    return Entry(item_id=item.item_id, decision=decision, reviewer=reviewer, time=now(), source=source,
                 dataset=item.dataset, **ident)


def _show(item: ReviewItem, position: int) -> dict[str, Any]:
    return {"item_id": item.item_id, "position": position, "post_id": item.post_id,
            "segment_index": item.segment_index, "text": item.text, "start": item.start, "end": item.end,
            "surface": item.surface, "label": item.label, "pattern": item.pattern, "rule": item.rule,
            "negated": item.negated}
