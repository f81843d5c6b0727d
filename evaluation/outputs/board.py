"""The leaderboard's numbers and its table: each run scored on the rows of the board's window that it
answered, from its stored predictions (no request is sent), with seeded bootstrap intervals, its
knowledge cutoff and the scores of its rows posted on or after it; as text, Markdown, JSON or CSV.

A run's own numbers are those derive_numbers stored (analysis.json `scores`); a window that leaves out
some of its rows scores the rest with the same function, the run's resamples and its seed.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Any

from evaluation.live.window import Window
from evaluation.outputs.runs import StoredRun
from evaluation.run_numbers import cutoff_at, draws, read_run_predictions
from evaluation.scoring.slices import METRICS, score_rows, window_scores
from schemas.config import utc_seconds
from schemas.lexicon import Decomposition, default_decomposition

TABLE = ("release", "split", "predictor", "setting", "model", "rows", *METRICS, "EWRate", "cutoff", "after_rows",
         "after_AccL", "after_F1V", "notes", "window", "run")
SHOWN = ("AccL", "F1V")  # with their intervals in the text and Markdown tables


@dataclass(frozen=True)
class BoardRow:
    """One run on a leaderboard of one window."""

    run: StoredRun
    window: Window  # the board's window (every row: `all`)
    scores: dict[str, Any]  # evaluation/scoring/slices.window_scores

    def to_json(self) -> dict[str, Any]:
        """The row as `express leaderboard --format json` gives it (docs/evaluation.md has the shape)."""
        c, s = self.run.config, self.scores
        return {"release": c.get("release", ""), "split": c.get("split", ""), "predictor": c.get("predictor", ""),
                "setting": self.run.setting_label, "model": c.get("model", "") or "-", "run": self.run.run_id,
                "window": self.run.window.label, "board_window": self.window.label,
                "rows": s["rows"], "masks": s["masks"], "run_rows": self.run.metrics.get("rows"),
                **{m: s[m] for m in (*METRICS, "EWRate")}, "intervals": s["intervals"],
                "cutoff": s["cutoff"], "after_cutoff": s["after_cutoff"],
                "notes": self.run.notes, "withdrawn": self.run.withdrawn, "rescored": self.run.rescored}


def holds_every_row(run: StoredRun, window: Window) -> bool:
    """The window holds every row the run answered (known from the span analysis.json stores)."""
    span = run.analysis.get("span")
    return window.everything or bool(span) and all(window.contains(utc_seconds(span[k])) for k in ("first", "last"))


def run_scores(run: StoredRun, window: Window, dec: Decomposition) -> dict[str, Any]:
    """The run's numbers on the rows of `window` it answered: as stored when the window holds them
    all, else scored from its stored rows with its own resamples and seed."""
    if run.analysis.get("scores") and holds_every_row(run, window):
        return run.analysis["scores"]
    samples, seed = draws(run.config, run.analysis)
    rows = [r for r in score_rows(read_run_predictions(run.path), dec)
            if window.everything or (r.created is not None and window.contains(r.created))]
    return window_scores(rows, cutoff_at(run.config), samples, seed)


def board_rows(runs: list[StoredRun], window: Window | None = None, dec: Decomposition | None = None) -> list[BoardRow]:
    """The runs that answered a row of `window` (default: every row), best AccV first per release and
    split."""
    window, dec = window or Window(), dec or default_decomposition()
    rows = [BoardRow(r, window, run_scores(r, window, dec)) for r in runs]
    return sorted((b for b in rows if b.scores["rows"]),
                  key=lambda b: (b.run.config.get("release", ""), b.run.config.get("split", ""), -b.scores["AccV"]))


def breakdown(run: StoredRun) -> dict[str, Any]:
    """What a page shows of one run beyond its leaderboard row: its scores per month of posting (with
    its cutoff to mark), per gold word, and its emotion-word summary, as analysis.json holds them. A
    run stored before they were derived gives None for them (`express eval-report RUN` derives them)."""
    a = run.analysis
    return {"run": run.run_id, "cutoff": (run.config.get("cutoff") or {}).get("cutoff"), "window": run.window.label,
            "span": a.get("span"), "months": a.get("months"), "labels": a.get("labels"),
            "emotion_words": a.get("emotion_words")}


def _value(scores: dict[str, Any] | None, metric: str, interval: bool = False) -> str:
    value = (scores or {}).get(metric)
    if value is None:
        return "-"
    lo_hi = scores["intervals"].get(metric) if interval else None
    return f"{value:.4f}" + (f" ({lo_hi[0]:.3f}-{lo_hi[1]:.3f})" if lo_hi else "")


def _cells(b: BoardRow) -> list[str]:
    row, s, after = b.to_json(), b.scores, b.scores["after_cutoff"]
    return [row["release"], row["split"], row["predictor"], row["setting"], row["model"], str(s["rows"]),
            *(_value(s, m, m in SHOWN) for m in METRICS), _value(s, "EWRate"), s["cutoff"] or "-",
            "-" if after is None else str(after["rows"]), _value(after, "AccL", True), _value(after, "F1V", True),
            row["notes"], row["window"], row["run"]]


def _csv(rows: list[BoardRow]) -> str:
    """One line per run: every number as a number, each interval as two columns (`_low`, `_high`)."""
    def numbers(prefix: str, s: dict[str, Any] | None) -> dict[str, Any]:
        s = s or {}
        out: dict[str, Any] = {f"{prefix}rows": s.get("rows"), f"{prefix}masks": s.get("masks")}
        for m in (*METRICS, "EWRate"):
            out[prefix + m] = s.get(m)
            if m in METRICS:
                lo_hi = (s.get("intervals") or {}).get(m) or [None, None]
                out[f"{prefix}{m}_low"], out[f"{prefix}{m}_high"] = lo_hi
        return out

    records = []
    for b in rows:
        j = b.to_json()
        records.append({**{k: j[k] for k in ("release", "split", "predictor", "setting", "model", "board_window",
                                             "window", "run_rows")},
                        **numbers("", b.scores), "cutoff": j["cutoff"], **numbers("after_", j["after_cutoff"]),
                        "notes": j["notes"], "run": j["run"]})
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(records[0]) if records else [], lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue().rstrip("\n")


def format_board(rows: list[BoardRow], fmt: str = "text") -> str:
    """Rows like the paper's Table 3 with the emotion-word rate, intervals, the cutoff and the
    after-cutoff scores, the run's marks (`notes`) and the window its rows cover."""
    if fmt == "json":
        return json.dumps([b.to_json() for b in rows], indent=2)
    if fmt == "csv":
        return _csv(rows)
    body = [_cells(b) for b in rows]
    window = rows[0].window if rows else Window()
    foot = ("AccL and F1V: value (bootstrap 95 % interval). EWRate: share of valid answers that are emotion words. "
            "after_*: rows posted on or after the model's cutoff.")
    if not window.everything:
        foot += f" Each run scored on the rows it answered posted in {window.label} (UTC), from its stored answers."
    if fmt == "markdown":
        lines = ["| " + " | ".join(TABLE) + " |", "|" + "---|" * len(TABLE)]
        return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in body] + ["", foot])
    widths = [max(len(x) for x in col) for col in zip(TABLE, *body)]
    lines = ["  ".join(x.ljust(w) for x, w in zip(row, widths)).rstrip() for row in [list(TABLE), *body]]
    return "\n".join(lines + ["", foot])
