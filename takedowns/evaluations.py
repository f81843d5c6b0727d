"""Evaluation runs after a takedown: the rows of taken-down posts leave predictions.jsonl and
probe.jsonl (together), an id shown as a few-shot example becomes "[taken down]", and every number
of the run is derived again from the rows left by the function that scores a fresh run
(evaluation/run_numbers.py), which records the rescoring in config.json; the report follows."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from common.files import commit_together, finish_commits, staged, write_json
from evaluation.outputs.report import write_report
from evaluation.run_numbers import Removal, derive_numbers, read_json, read_rows, record_removal
from takedowns.scrub import REDACTED
from warehouse.layout import EvaluationPaths

STAGE = "takedown"  # the tag of the staged files' temp names (common/files.py: staged)


class RowFinder(Protocol):
    """What this step asks of the takedown matcher."""

    def in_json(self, obj: Any) -> bool: ...

    def id_hit(self, value: Any) -> bool: ...


def _scrub_predictions(path: Path, finder: RowFinder) -> tuple[list[dict[str, Any]], int, bool]:
    """The rows kept (few-shot ids redacted), how many left, whether a kept row changed."""
    kept, removed, changed = [], 0, False
    for row in read_rows(path):
        shots = row.get("shots") or []
        if finder.in_json({k: v for k, v in row.items() if k != "shots"}):
            removed += 1
            continue
        if any(finder.id_hit(s) for s in shots):
            row["shots"] = [REDACTED if finder.id_hit(s) else s for s in shots]
            changed = True
        kept.append(row)
    return kept, removed, changed


def _stage(path: Path, rows: list[dict[str, Any]]) -> Path:
    tmp = staged(path, STAGE)
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return tmp


def scrub_evaluation(run_dir: Path, finder: RowFinder, ledger_version: int) -> int:
    """Rewrite one evaluation run; returns how many prediction rows left it. A run whose numbers
    still count rows that left (an apply killed before it rescored) is rescored now."""
    paths = EvaluationPaths(run_dir)
    if not paths.predictions.exists():
        return 0
    finish_commits(run_dir)  # a rewrite a kill interrupted is finished first
    for path in (paths.predictions, paths.probe):
        staged(path, STAGE).unlink(missing_ok=True)  # staged by a pass killed before its journal was written
    kept, removed, changed = _scrub_predictions(paths.predictions, finder)
    probe = list(read_rows(paths.probe))
    probe_kept = [r for r in probe if not finder.in_json(r)]
    changes = {paths.predictions: _stage(paths.predictions, kept)} if removed or changed else {}
    if len(probe_kept) < len(probe):
        changes[paths.probe] = _stage(paths.probe, probe_kept)
    commit_together(run_dir, changes)  # the two files change together, or neither
    config = read_json(paths.config)
    if config.get("status", "complete") != "complete" or not paths.metrics.exists():
        if removed or len(probe_kept) < len(probe):  # no numbers to derive again: what left is recorded
            write_json(paths.config, record_removal(config, Removal(removed, len(probe) - len(probe_kept),
                                                                    ledger_version)))
        return removed
    # what the numbers on record counted, against the rows left (more than this pass removed, when
    # an apply was killed between rewriting the rows and deriving the numbers)
    scored = read_json(paths.metrics).get("rows", len(kept))
    probed = ((read_json(paths.analysis).get("probe") or {}).get("all") or {}).get("rows", len(probe_kept))
    if (scored, probed) == (len(kept), len(probe_kept)):
        return removed
    derive_numbers(run_dir, removal=Removal(scored - len(kept), probed - len(probe_kept), ledger_version))
    if paths.report.exists():
        write_report(run_dir)
    return scored - len(kept)
