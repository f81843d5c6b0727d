"""Stored evaluation runs: list them, find one by id (or unique prefix, or path), pick the ones a
leaderboard shows (evaluation/outputs/board.py scores them).

Only complete runs (config status "complete" and a metrics.json) are listed; failed or
interrupted runs stay on disk for inspection but never reach a leaderboard. The leaderboard marks
a run on a withdrawn release and a run a takedown rescored (docs/takedowns.md).
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from common.errors import UserError
from evaluation.live.window import Window
from schemas.config import utc_seconds
from warehouse.layout import EvaluationPaths, Warehouse
from warehouse.ledgers.withdrawn import withdrawal

DAY = 86400


def covered(asked: Window, span: dict[str, str]) -> Window:
    """The window a run's rows span: from the day of its first row to the end of the day of its last,
    inside the window it asked for."""
    first, last = utc_seconds(span["first"]), utc_seconds(span["last"])
    after, before = first - first % DAY, last - last % DAY + DAY
    return Window(after if asked.after is None else max(after, asked.after),
                  before if asked.before is None else min(before, asked.before))


@dataclass(frozen=True)
class StoredRun:
    run_id: str
    path: Path
    config: dict[str, Any]
    metrics: dict[str, Any]
    withdrawn: dict[str, Any] | None = None  # the withdrawal record of the run's release, when the board read it
    analysis: dict[str, Any] = field(default_factory=dict)

    @property
    def rescored(self) -> dict[str, Any] | None:
        """What a takedown removed from the run (config.json `takedowns`), if anything."""
        return self.config.get("takedowns") or None

    @property
    def notes(self) -> str:
        """The leaderboard's marks: a withdrawn release (and its successor), a rescored run."""
        out = []
        if self.withdrawn is not None:
            out.append("withdrawn" + (f", successor {self.withdrawn['successor']}" if self.withdrawn.get("successor") else ""))
        if self.rescored:
            n = self.rescored.get("rows_removed", 0)
            out.append(f"rescored: {n} row{'s' * (n != 1)} taken down"
                       + (f" (ledger {self.rescored['ledger_version']})" if self.rescored.get("ledger_version") else ""))
        return "; ".join(out) or "-"

    @property
    def key(self) -> tuple[str, ...]:
        c = self.config
        return (c.get("release", ""), c.get("split", ""), c.get("predictor", ""), c.get("setting", ""), c.get("model", ""),
                c.get("prompt_variant") or "-", str(c.get("temperature")), self.window.label)

    @property
    def asked(self) -> Window:
        """The posting window the run was asked to score (runs stored before windows: every row)."""
        return Window.from_json(self.config.get("window"))

    @property
    def cut(self) -> bool:
        """The run answered fewer rows than its window held (`--limit`, a sample): its rows say which."""
        answered = int(self.metrics.get("rows", 0)) + int((self.rescored or {}).get("rows_removed", 0))
        held = self.config.get("window_rows")
        return answered < held if held is not None else self.config.get("limit") is not None

    @property
    def window(self) -> Window:
        """The window the run covered: the one asked, or what its rows span when fewer were answered."""
        span = self.analysis.get("span")
        return covered(self.asked, span) if self.cut and span else self.asked

    @property
    def setting_label(self) -> str:
        """The setting, with the prompt variant and a non-zero temperature when a run has them."""
        c = self.config
        label = c.get("setting", "")
        if c.get("prompt_variant") not in (None, "-", "default"):
            label += f"+{c['prompt_variant']}"
        if c.get("temperature"):
            label += f"@t{c['temperature']:g}"
        return label


class RunUnreadable(UserError, ValueError):
    """A stored run whose config cannot be read back (a window that is no date): it is left out of
    every table, said once, and never stops the others."""


def load_run(path: Path) -> StoredRun | None:
    try:
        config = json.loads(EvaluationPaths(path).config.read_text())
        metrics = json.loads(EvaluationPaths(path).metrics.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    if config.get("status", "complete") != "complete":
        return None
    try:
        analysis = json.loads(EvaluationPaths(path).analysis.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        analysis = {}
    run = StoredRun(path.name, path, config, metrics, analysis=analysis)
    try:
        run.window
    except ValueError as exc:
        raise RunUnreadable(f"{EvaluationPaths(path).config}: its window cannot be read back ({exc}); "
                            "the run is left out") from None
    return run


def list_runs(warehouse: Warehouse) -> list[StoredRun]:
    """The complete runs; one that cannot be read back is named on stderr and left out."""
    root = warehouse.evaluations
    runs = []
    for p in sorted(root.iterdir()) if root.is_dir() else []:
        try:
            runs.append(load_run(p))
        except RunUnreadable as exc:
            print(f"express: {exc}", file=sys.stderr)
    return [r for r in runs if r is not None]


def find_run(warehouse: Warehouse, ref: str) -> StoredRun:
    """A run by folder path, full id or unique id prefix; errors say what was searched."""
    as_path = Path(ref)
    if EvaluationPaths(as_path).config.exists():
        run = load_run(as_path.resolve())
        if run is None:
            raise ValueError(f"run {ref} is not complete (see its config.json)")
        return run
    runs = list_runs(warehouse)
    matches = [r for r in runs if r.run_id == ref] or [r for r in runs if r.run_id.startswith(ref)]
    if not matches:
        raise FileNotFoundError(f"no complete run '{ref}' in {warehouse.evaluations}")
    if len(matches) > 1:
        raise ValueError(f"run '{ref}' is ambiguous: {', '.join(r.run_id for r in matches)}")
    return matches[0]


def release_dir(warehouse: Warehouse, release_id: str) -> Path:
    """Where a run's release (`dataset/version`, as config.json names it) is, or was."""
    dataset, _, version = release_id.partition("/")
    return warehouse.release_dir(dataset, version)


def _withdrawal(warehouse: Warehouse, release_id: str) -> dict[str, Any] | None:
    return withdrawal(release_dir(warehouse, release_id)) if "/" in release_id else None


def leaderboard(warehouse: Warehouse, release: str | None = None, split: str | None = None,
                latest_only: bool = True, hide_withdrawn: bool = False) -> list[StoredRun]:
    """The runs a leaderboard shows: by default the latest run per predictor/setting/model and
    window covered (a setting's prompt variant and temperature count as part of it). Each run knows
    whether its release was withdrawn; `hide_withdrawn` leaves those runs out."""
    runs = [replace(r, withdrawn=_withdrawal(warehouse, r.config.get("release", ""))) for r in list_runs(warehouse)
            if (release is None or r.config.get("release") == release or r.config.get("release", "").endswith("/" + release))
            and (split is None or r.config.get("split") == split)]
    if hide_withdrawn:
        runs = [r for r in runs if r.withdrawn is None]
    if latest_only:
        latest: dict[tuple[str, ...], StoredRun] = {}
        for r in sorted(runs, key=lambda r: r.config.get("created", "")):
            latest[r.key] = r
        runs = list(latest.values())
    return runs
