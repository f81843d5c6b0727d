"""Every number of an evaluation run, derived from what the run stores: its rows (predictions.jsonl,
probe.jsonl) and its config.json. One function serves a fresh run, a run just probed, a run a
takedown rescored and `express eval-report`, so their numbers cannot drift apart.

What the rows cannot give is kept as the run measured it (token usage, throughput, answers from the
cache, request errors, how the probe ran) and analysis.json says so (`kept_as_answered`). A rescoring
is recorded in config.json (`takedowns`): the rows removed, by which ledger version, the metrics
before and after.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from common.files import write_json
from evaluation.scoring.analysis import analyse
from evaluation.scoring.invalid import invalid_shapes
from evaluation.live.memorization import summarise
from evaluation.scoring.metrics import aggregate
from evaluation.scoring.slices import emotion_word_summary, month_scores, score_rows, span, window_scores
from evaluation.live.timesplit import cutoff_split
from schemas.config import LiveFields, probe_kinds, utc_seconds
from schemas.lexicon import Decomposition, default_decomposition
from warehouse.layout import EvaluationPaths

# Measured while the run was answered, not derivable from its stored rows
KEPT = ("usage_new_tokens", "answers_from_cache", "request_errors", "throughput")
PROBE_FACTS = ("probe", "settings", "model", "min_k_unavailable", "sample", "timing")  # how the probe ran
TAKEN_DOWN = "rows of posts taken down (docs/takedowns.md)"


@dataclass(frozen=True)
class Removal:
    """Rows a takedown removed from a run, and the ledger version that removed them."""

    rows: int  # prediction rows
    probe_rows: int
    ledger_version: int


def read_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON lines of a run's file (none when it does not exist)."""
    if not path.exists():
        return
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def read_run_predictions(run_dir: str | Path) -> Iterator[dict[str, Any]]:
    """A run's rows; the gold words are `surfaces` (runs stored before that call them `labels`)."""
    for row in read_rows(EvaluationPaths(Path(run_dir)).predictions):
        if "surfaces" not in row and "labels" in row:
            row["surfaces"] = row.pop("labels")
        yield row


def read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {}


def kept_facts(run_dir: str | Path) -> dict[str, Any]:
    """What the run's analysis.json holds that its rows cannot give: KEPT, and how the probe ran."""
    return _kept(read_json(EvaluationPaths(Path(run_dir)).analysis))


def _kept(analysis: dict[str, Any]) -> dict[str, Any]:
    out = {k: analysis[k] for k in KEPT if k in analysis}
    if analysis.get("probe"):
        out["probe"] = {k: analysis["probe"].get(k) for k in PROBE_FACTS}
    return out


def draws(config: dict[str, Any], old: dict[str, Any]) -> tuple[int, int]:
    """The bootstrap's resamples and seed, as the run was scored (runs stored before config.json
    held them: as their analysis drew them)."""
    drawn = old.get("intervals") or {}
    samples = config.get("bootstrap", drawn.get("samples", 1000))
    return int(samples), int((config.get("options") or {}).get("seed", drawn.get("seed", 0)))


def cutoff_at(config: dict[str, Any]) -> int | None:
    """The run's knowledge cutoff (config.json `cutoff`) in Unix seconds, or None."""
    cutoff = (config.get("cutoff") or {}).get("cutoff")
    return utc_seconds(cutoff) if cutoff else None


def derive_numbers(run_dir: str | Path, dec: Decomposition | None = None, *, kept: dict[str, Any] | None = None,
                   removal: Removal | None = None) -> dict[str, Any]:
    """Write metrics.json and analysis.json from the run's stored rows and config.json; returns the
    metrics. `kept`: what the rows cannot give (default: as analysis.json holds it). `removal`: a
    takedown took rows out; config.json records it with the metrics before and after."""
    paths = EvaluationPaths(Path(run_dir))
    dec = dec or default_decomposition()
    config = read_json(paths.config)
    old = read_json(paths.analysis)
    kept = _kept(old) if kept is None else kept
    samples, seed = draws(config, old)
    scored = score_rows(read_run_predictions(paths.root), dec)
    metrics = aggregate(r.score for r in scored)
    analysis = analyse(((r["surfaces"], r["parsed"], r.get("ranked")) for r in read_run_predictions(paths.root)),
                       dec, bootstrap=samples, seed=seed)
    analysis["invalid_shapes"] = invalid_shapes(read_run_predictions(paths.root))
    analysis |= {k: kept[k] for k in KEPT if k in kept}
    analysis["kept_as_answered"] = [k for k in KEPT if k in kept]
    cutoff = (config.get("cutoff") or {}).get("cutoff")
    min_rows = int(config.get("cutoff_min_rows") or LiveFields().cutoff_min_rows)
    cut = cutoff_at(config)
    if cut is not None:
        analysis["cutoff"] = cutoff_split(((r.created, r.score) for r in scored), cut, min_rows, samples, seed)
    # what a leaderboard, a page and the report show of the run: docs/evaluation.md
    analysis["scores"] = window_scores(scored, cut, samples, seed)
    analysis["span"] = span(scored)
    analysis["months"] = month_scores(scored, samples, seed)
    analysis["emotion_words"] = emotion_word_summary(scored, metrics["VRate"])
    if kept.get("probe"):
        facts = kept["probe"]
        analysis["probe"] = {**facts, **summarise(list(read_rows(paths.probe)), facts["settings"]["overlap_words"],
                                                  cutoff, min_rows, probe_kinds(facts["probe"]), samples, seed)}
    write_json(paths.analysis, analysis)
    if removal is not None:
        write_json(paths.config, record_removal(config, removal, read_json(paths.metrics), metrics))
    write_json(paths.metrics, metrics)  # last: the numbers on record are those of the rows left
    return metrics


def record_removal(config: dict[str, Any], removal: Removal, before: dict[str, Any] | None = None,
                   after: dict[str, Any] | None = None) -> dict[str, Any]:
    """config.json's `takedowns` with this removal: totals, the ledger version, and one entry per
    rescoring with the metrics before and after (a rescoring a kill interrupted is replaced)."""
    record = dict(config.get("takedowns") or {})
    history = list(record.get("rescored") or [])
    entry = {"ledger_version": removal.ledger_version, "rows_removed": removal.rows,
             "probe_rows_removed": removal.probe_rows, "time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
             "before": before, "after": after}
    last = history[-1] if history else {}
    redo = bool(before) and last.get("ledger_version") == removal.ledger_version and last.get("before") == before
    if redo:  # derived once, but killed before metrics.json was written: this rescoring replaces it
        history.pop()
    for key, n in (("rows_removed", removal.rows), ("probe_rows_removed", removal.probe_rows)):
        record[key] = record.get(key, 0) - (last.get(key, 0) if redo else 0) + n
    record.update(ledger_version=removal.ledger_version, why=TAKEN_DOWN, rescored=[*history, entry])
    return {**config, "takedowns": record}
