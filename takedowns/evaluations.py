"""Evaluation runs after a takedown: the rows of taken-down posts leave predictions.jsonl, an id
shown as a few-shot example becomes "[taken down]", and the run's metrics, analysis and report are
computed again from what is left (as a run is scored: from its stored file)."""
from __future__ import annotations

import json
from pathlib import Path

from common.files import write_atomic
from evaluation.report import write_report
from evaluation.run import rescore_run
from common.takedown_matcher import TakedownMatcher
from takedowns.scrub import REDACTED


def scrub_evaluation(run_dir: Path, finder: TakedownMatcher) -> int:
    """Rewrite one evaluation run; returns how many prediction rows left it."""
    path = run_dir / "predictions.jsonl"
    if not path.exists():
        return 0
    kept, removed, changed = [], 0, False
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        shots = row.get("shots") or []
        if finder.in_json({k: v for k, v in row.items() if k != "shots"}):
            removed += 1
            continue
        if any(finder.id_hit(s) for s in shots):
            row["shots"] = [REDACTED if finder.id_hit(s) else s for s in shots]
            changed = True
        kept.append(json.dumps(row, ensure_ascii=False) + "\n")
    if not (removed or changed):
        return 0
    write_atomic(path, "".join(kept).encode("utf-8"))
    config_path = run_dir / "config.json"
    config = json.loads(config_path.read_text()) if config_path.exists() else {}
    gone = (config.get("takedowns") or {}).get("rows_removed", 0) + removed
    config["takedowns"] = {"rows_removed": gone, "why": "rows of posts taken down (docs/takedowns.md)"}
    write_atomic(config_path, (json.dumps(config, indent=2) + "\n").encode())
    if config.get("status", "complete") == "complete" and (run_dir / "metrics.json").exists():
        rescore_run(run_dir)
        if (run_dir / "report" / "report.md").exists():
            write_report(run_dir)
    return removed
