"""How long the rest of a probe will take, from what its first rows cost. Rows differ in length, and
so in cost: a server echoes Min-K%'s text token by token and a continuation may take two tokens per
word of the half it is compared with. So each probe's seconds are fitted to its work (Min-K%: the
text's words; continuation: the tokens its answer may take) as a cost per request plus a cost per
unit, and the estimate is that fit over the work left. The first rows asked are the shortest, the
middle and the longest text, so the first estimate has seen the range of sizes that tells the two
costs apart. Answers from the cache cost nothing and teach nothing: they are left out of the fit.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

FIRST_ROWS = 3  # rows asked (not from the cache) before the first estimate


def fit(units: list[float], seconds: list[float]) -> tuple[float, float]:
    """(seconds per request, seconds per unit), neither below zero: by least squares once the rows
    measured differ enough in size to tell a fixed cost from a cost per unit (twice as large), else
    (or where the fit goes below zero) as a cost per unit alone, which errs on the long side."""
    u, s = np.asarray(units, dtype=float), np.asarray(seconds, dtype=float)
    if u.min() > 0 and u.max() >= 2 * u.min():
        fixed, per_unit = np.linalg.lstsq(np.column_stack([np.ones_like(u), u]), s, rcond=None)[0]
        if fixed >= 0 and per_unit >= 0:
            return float(fixed), float(per_unit)
    return 0.0, float(s.sum() / u.sum()) if u.sum() else 0.0


def probe_order(sizes: list[int]) -> list[int]:
    """The order to probe rows of these sizes in: the shortest, the middle and the longest first, then
    the rest as they come."""
    by_size = sorted(range(len(sizes)), key=lambda i: (sizes[i], i))
    first = list(dict.fromkeys(by_size[k] for k in (0, len(sizes) // 2, -1))) if sizes else []
    return first + [i for i in range(len(sizes)) if i not in set(first)]


@dataclass
class ProbeEstimate:
    """The probe's clock: `work[i][kind]` is row i's units for each probe asked; `timed` measures a
    call, `row_done` counts a row, `left()` is the estimate of the seconds the rows after it take."""

    work: list[dict[str, float]]
    clock: Callable[[], float] = time.perf_counter
    done: int = 0
    asked_rows: int = 0  # rows that asked the model at least once
    calls: dict[str, tuple[list[float], list[float]]] = field(default_factory=dict)  # kind: (units, seconds)
    first: dict[str, Any] | None = None  # the first estimate, once FIRST_ROWS rows were asked
    started: float = 0.0
    _asked: bool = False

    def __post_init__(self) -> None:
        self.started = self.clock()

    def timed(self, kind: str, model: Any, call: Callable[[], Any]) -> Any:
        """`call()`'s result; its seconds count toward `kind`'s fit when the model computed an answer
        (`model.computed` grew) rather than reading its cache."""
        before, t0 = model.computed, self.clock()
        out = call()
        if model.computed > before:
            units, seconds = self.calls.setdefault(kind, ([], []))
            units.append(self.work[self.done][kind])
            seconds.append(self.clock() - t0)
            self._asked = True
        return out

    def row_done(self) -> dict[str, Any] | None:
        """Counts a row; returns the first estimate when this row makes it."""
        self.done += 1
        self.asked_rows += self._asked
        self._asked = False
        if self.first is None and self.asked_rows >= min(FIRST_ROWS, len(self.work)) and self.done < len(self.work):
            left = self.left()
            if left is not None:
                self.first = {"after_rows": self.done, "seconds_so_far": round(self.seconds, 3),
                              "estimate_seconds": round(self.seconds + left, 3)}
                return self.first
        return None

    def drop(self, kind: str) -> None:
        """`kind` will not be asked again (Min-K% found unavailable): no work of it is left."""
        for row in self.work[self.done:]:
            row.pop(kind, None)

    @property
    def seconds(self) -> float:
        return self.clock() - self.started

    def left(self) -> float | None:
        """Seconds the rows not yet probed will take; None before any row was asked."""
        rest = self.work[self.done:]
        if not rest:
            return 0.0
        total = 0.0
        for kind in rest[0]:
            if kind not in self.calls:
                return None
            fixed, per_unit = fit(*self.calls[kind])
            total += sum(fixed + per_unit * row[kind] for row in rest)
        return total

    def summary(self) -> dict[str, Any]:
        """What the probe's facts keep: the first estimate next to the seconds it took."""
        return {"rows": len(self.work), "seconds": round(self.seconds, 3), "first_estimate": self.first}
