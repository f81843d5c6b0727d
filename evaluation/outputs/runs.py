"""Stored evaluation runs: list them, find one by id (or unique prefix, or path), rank them.

Only complete runs (config status "complete" and a metrics.json) are listed; failed or
interrupted runs stay on disk for inspection but never reach a leaderboard. The leaderboard marks
a run on a withdrawn release and a run a takedown rescored (docs/takedowns.md).
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from common.errors import UserError
from evaluation.live.window import Window
from warehouse.layout import EvaluationPaths, Warehouse
from warehouse.ledgers.withdrawn import withdrawal

COLUMNS = ("AccL", "AccV", "F1V", "VRate")


@dataclass(frozen=True)
class StoredRun:
    run_id: str
    path: Path
    config: dict[str, Any]
    metrics: dict[str, Any]
    withdrawn: dict[str, Any] | None = None  # the withdrawal record of the run's release, when the board read it

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
    def window(self) -> Window:
        """The rows' posting window the run scored (runs stored before windows scored every row)."""
        return Window.from_json(self.config.get("window"))

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
    run = StoredRun(path.name, path, config, metrics)
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
                latest_only: bool = True, window: Window | None = None, hide_withdrawn: bool = False) -> list[StoredRun]:
    """Runs for the table, best AccV first; by default the latest run per predictor/setting/model
    and window (a setting's prompt variant and temperature count as part of it). `window`: only runs
    that scored no row outside it. Each run knows whether its release was withdrawn; `hide_withdrawn`
    leaves those runs out."""
    runs = [replace(r, withdrawn=_withdrawal(warehouse, r.config.get("release", ""))) for r in list_runs(warehouse)
            if (release is None or r.config.get("release") == release or r.config.get("release", "").endswith("/" + release))
            and (split is None or r.config.get("split") == split)
            and (window is None or r.window.within(window))]
    if hide_withdrawn:
        runs = [r for r in runs if r.withdrawn is None]
    if latest_only:
        latest: dict[tuple[str, ...], StoredRun] = {}
        for r in sorted(runs, key=lambda r: r.config.get("created", "")):
            latest[r.key] = r
        runs = list(latest.values())
    return sorted(runs, key=lambda r: (r.config.get("release", ""), r.config.get("split", ""), -r.metrics.get("AccV", 0.0)))


def format_table(runs: list[StoredRun], fmt: str = "text") -> str:
    """Rows like the paper's Table 3: predictor / setting / model, then AccL AccV F1V VRate, the
    run's marks (`notes`: a withdrawn release, a rescored run; JSON also gives them as `withdrawn` and
    `rescored`) and the window of posting dates it scored (`all`: every row of the split)."""
    head = ["release", "split", "predictor", "setting", "model", "rows", *COLUMNS, "notes", "window", "run"]
    body = [[r.config.get("release", ""), r.config.get("split", ""), r.config.get("predictor", ""),
             r.setting_label, r.config.get("model", "") or "-", str(r.metrics.get("rows", "")),
             *(f"{r.metrics.get(c, 0.0):.4f}" for c in COLUMNS), r.notes, r.window.label, r.run_id] for r in runs]
    if fmt == "json":
        return json.dumps([{**dict(zip(head, row)), "withdrawn": r.withdrawn, "rescored": r.rescored}
                           for r, row in zip(runs, body)], indent=2)
    if fmt == "markdown":
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in body])
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    return "\n".join("  ".join(x.ljust(w) for x, w in zip(row, widths)).rstrip() for row in [head, *body])
