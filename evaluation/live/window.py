"""Time windows on `created_utc`: which rows of a split a run scores, so a model can be scored on
posts written after its training (docs/live.md).

A window is half-open, [posted_after, posted_before) in UTC, so adjacent windows never share a row.
An empty window is refused before any work: a run of zero rows would look like a score.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schemas.config import utc_seconds

if TYPE_CHECKING:
    import numpy as np


def iso(ts: int) -> str:
    """Unix seconds as a date when at midnight UTC, else as an ISO time."""
    t = datetime.fromtimestamp(ts, timezone.utc)
    return t.strftime("%Y-%m-%d") if t.hour == t.minute == t.second == 0 else t.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Window:
    after: int | None = None  # Unix seconds, inclusive
    before: int | None = None  # Unix seconds, exclusive

    @classmethod
    def parse(cls, posted_after: str = "", posted_before: str = "") -> "Window":
        return cls(utc_seconds(posted_after) if posted_after else None,
                   utc_seconds(posted_before) if posted_before else None)

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> "Window":
        """The window a run stored (none: every row)."""
        data = data or {}
        return cls.parse(data.get("posted_after") or "", data.get("posted_before") or "")

    @property
    def everything(self) -> bool:
        return self.after is None and self.before is None

    def contains(self, ts: int) -> bool:
        return (self.after is None or ts >= self.after) and (self.before is None or ts < self.before)

    def within(self, outer: "Window") -> bool:
        """Every row this window can hold is in `outer` (the leaderboard's filter)."""
        return (outer.after is None or (self.after is not None and self.after >= outer.after)) and \
               (outer.before is None or (self.before is not None and self.before <= outer.before))

    def to_json(self) -> dict[str, str] | None:
        if self.everything:
            return None
        return {"posted_after": iso(self.after) if self.after is not None else "",
                "posted_before": iso(self.before) if self.before is not None else ""}

    @property
    def label(self) -> str:
        """`2024-02-01..`, `..2024-02-01`, `2024-01-01..2024-02-01`, or `all`."""
        if self.everything:
            return "all"
        return (iso(self.after) if self.after is not None else "") + ".." + \
               (iso(self.before) if self.before is not None else "")

    def rows(self, rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        return (r for r in rows if self.contains(int(r["created_utc"])))


def created_times(path: str | Path) -> "np.ndarray":
    """The `created_utc` column of a split file (one small column, read at once). numpy and pyarrow
    load here, not with the module: the leaderboard uses windows and reads no split file."""
    import numpy as np
    import pyarrow.parquet as pq

    return pq.read_table(path, columns=["created_utc"]).column(0).to_numpy(zero_copy_only=False).astype(np.int64)


def rows_in_window(path: str | Path, window: Window) -> int:
    times = created_times(path)
    if window.after is not None:
        times = times[times >= window.after]
    if window.before is not None:
        times = times[times < window.before]
    return len(times)


def check_window(path: str | Path, window: Window, what: str) -> int:
    """Rows of the split file in the window; a run of no rows is an error, said before any work (a
    run of zero rows would store zeros for every metric), with when the split's rows were posted."""
    n = rows_in_window(path, window)
    if n == 0 and window.everything:
        raise ValueError(f"{what} has no rows; nothing was scored")
    if n == 0:
        times = created_times(path)
        span = f"its rows were posted {iso(int(times.min()))} to {iso(int(times.max()))}" if len(times) else "it has none"
        raise ValueError(f"no rows of {what} were posted in the window {window.label} ({span}); nothing was scored")
    return n
