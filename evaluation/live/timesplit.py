"""Every metric split at a knowledge cutoff: rows posted before it (the model may have read them)
against rows posted after it (it cannot have), with the difference and a bootstrap interval.

A side with fewer than `min_rows` rows gives its own numbers but no difference: an interval from a
handful of rows would look like a finding. The note then says which side is short, and by how much.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from evaluation.scoring.metrics import RowScore
from evaluation.scoring.stats import bootstrap_difference, express_from_weights, row_arrays
from evaluation.live.window import iso

METRICS = ("AccL", "AccV", "F1V", "VRate")


def _side(scores: list[RowScore]) -> dict[str, Any]:
    if not scores:
        return {"rows": 0, "masks": 0}
    arrays = row_arrays(scores)
    values = express_from_weights(arrays, np.ones(len(scores)))
    return {"rows": len(scores), "masks": int(arrays["masks"].sum()), **{m: values[m] for m in METRICS}}


def _note(before: int, after: int, cutoff: str, min_rows: int) -> str | None:
    """Why no difference is told, or None when both sides have enough rows."""
    if not before and not after:
        return "the run has no rows"
    if not before:
        return f"every row was posted on or after the cutoff {cutoff}: no row before it to compare with"
    if not after:
        return f"every row was posted before the cutoff {cutoff}: no row after it to compare with"
    short = [f"{n} {side}" for side, n in (("before", before), ("after", after)) if n < min_rows]
    if short:
        return f"too few rows to tell: {' and '.join(short)} the cutoff, {min_rows} needed on each side"
    return None


def cutoff_split(rows: Iterable[tuple[int | None, RowScore]], cutoff: int, min_rows: int = 20,
                 samples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """`rows`: (created_utc, score) per scored row. The difference is after minus before."""
    before: list[RowScore] = []
    after: list[RowScore] = []
    for created, score in rows:
        if created is None:
            return {"cutoff": iso(cutoff), "difference": None,
                    "note": "the run's rows carry no created_utc (stored before runs recorded it): evaluate again"}
        (before if created < cutoff else after).append(score)
    out: dict[str, Any] = {"cutoff": iso(cutoff), "min_rows": min_rows, "before": _side(before), "after": _side(after)}
    note = _note(len(before), len(after), iso(cutoff), min_rows)
    if note:
        return {**out, "difference": None, "note": note}
    a, b = out["before"], out["after"]
    intervals = bootstrap_difference(row_arrays(before), row_arrays(after), samples, seed)
    out["difference"] = {m: {"value": b[m] - a[m], "interval": intervals.get(m)} for m in METRICS}
    out["intervals"] = {"level": 0.95, "samples": samples, "seed": seed}
    return out
