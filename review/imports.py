"""Read decisions from our JSONL or from a Label Studio JSON export into ledger entries.

The whole file is checked before anything is written: a bad line raises ReviewInputError naming
the file and line, and the ledger stays as it was.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from common.jsonl import parse_jsonl
from review.labelstudio import DECISION_CONTROL
from review.ledger import VERDICTS, Entry, Ledger, now
from review.registry import load_registry


class ReviewInputError(ValueError):
    """A decisions file that cannot be imported; nothing was written."""


@dataclass
class ImportResult:
    entries: list[Entry]
    format: str  # jsonl | label-studio
    cancelled: int = 0  # Label Studio annotations that were skipped (was_cancelled)
    unannotated: int = 0  # Label Studio tasks nobody annotated
    versions: dict[str, int] | None = None  # dataset -> ledger version after the import


def read_decisions(path: str | Path, root: Path, reviewer: str | None = None,
                   dataset: str | None = None) -> ImportResult:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReviewInputError(f"{p}: cannot read ({exc})") from exc
    registry = load_registry(root, dataset)
    if text.lstrip().startswith("["):
        return _label_studio(p, text, registry, reviewer)
    return _jsonl(p, text, registry, reviewer)


def import_decisions(path: str | Path, root: Path, reviewer: str | None = None,
                     dataset: str | None = None) -> ImportResult:
    """Read, check, then append one batch per dataset ledger."""
    result = read_decisions(path, root, reviewer, dataset)
    by_dataset: dict[str, list[Entry]] = {}
    for e in result.entries:
        by_dataset.setdefault(e.dataset, []).append(e)
    result.versions = {name: Ledger(root, name).append(group) for name, group in sorted(by_dataset.items())}
    return result


def _item(registry: dict[str, list[dict[str, Any]]], item_id: Any, where: str) -> dict[str, Any]:
    if not isinstance(item_id, str) or not item_id:
        raise ReviewInputError(f"{where}: needs an 'item_id' (a string)")
    rows = registry.get(item_id)
    if not rows:
        raise ReviewInputError(f"{where}: unknown item_id '{item_id}' (export or serve its release first: "
                               "express review export)")
    if len(rows) > 1:
        names = ", ".join(r["dataset"] for r in rows)
        raise ReviewInputError(f"{where}: item_id '{item_id}' is in several datasets ({names}); pass --dataset")
    return rows[0]


def _entry(row: dict[str, Any], decision: str, reviewer: str, time: str, source: str) -> Entry:
    return Entry(item_id=row["item_id"], decision=decision, reviewer=reviewer, time=time, source=source,
                 dataset=row["dataset"], post_id=row["post_id"], surface=row["surface"],
                 occurrence=row["occurrence"], occurrences=row["occurrences"], left=list(row.get("left") or []),
                 right=list(row.get("right") or []), pattern=row.get("pattern") or "", rule=row.get("rule") or "",
                 label=row.get("label") or "", negated=row.get("negated"), release=row.get("release") or "")


def _decision(value: Any, where: str) -> str:
    d = value.strip().lower() if isinstance(value, str) else value
    if d not in VERDICTS:
        raise ReviewInputError(f"{where}: decision must be 'accept' or 'reject', not {value!r}")
    return d


def _time(value: Any, where: str) -> str:
    if value in (None, ""):
        return now()
    try:
        datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError as exc:
        raise ReviewInputError(f"{where}: time {value!r} is not an ISO 8601 timestamp") from exc
    return str(value)


def _jsonl(p: Path, text: str, registry: dict[str, list[dict[str, Any]]], reviewer: str | None) -> ImportResult:
    entries = []
    for n, row in parse_jsonl(text.split("\n"), p, ReviewInputError):
        where = f"{p}:{n}"
        item = _item(registry, row.get("item_id"), where)
        decision = _decision(row.get("decision"), where)
        who = row.get("reviewer") or reviewer
        if not isinstance(who, str) or not who.strip():
            raise ReviewInputError(f"{where}: no reviewer (give 'reviewer' in the line or --reviewer NAME)")
        entries.append(_entry(item, decision, who.strip(), _time(row.get("time"), where), f"jsonl:{p.name}:{n}"))
    if not entries:
        raise ReviewInputError(f"{p}: no decisions found")
    return ImportResult(entries, "jsonl")


def json_array_elements(text: str, p: Path) -> list[tuple[int, Any]]:
    """(line number, element) of a top-level JSON array, so errors can name the line."""
    dec = json.JSONDecoder()
    i = len(text) - len(text.lstrip())
    if text[i:i + 1] != "[":
        raise ReviewInputError(f"{p}:1: a Label Studio export is a JSON array of tasks")
    i += 1
    out = []
    while True:
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
        if i >= len(text):
            raise ReviewInputError(f"{p}:{text.count(chr(10), 0, i) + 1}: the JSON array is not closed")
        if text[i] == "]":
            return out
        line = text.count("\n", 0, i) + 1
        try:
            value, i = dec.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise ReviewInputError(f"{p}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
        out.append((line, value))


def _annotator(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("email") or f"label-studio-user-{value.get('id')}")
    return f"label-studio-user-{value}"


def _label_studio(p: Path, text: str, registry: dict[str, list[dict[str, Any]]],
                  reviewer: str | None) -> ImportResult:
    """Label Studio's JSON export (tasks with annotations) or its JSON_MIN export (flat rows)."""
    result = ImportResult([], "label-studio")
    found: list[tuple[str, dict[str, Any], str, Any, str, str]] = []
    for line, task in json_array_elements(text, p):
        where = f"{p}:{line}"
        if not isinstance(task, dict):
            raise ReviewInputError(f"{where}: each task must be a JSON object")
        where += f" (task {task.get('id', '?')})"
        if "annotations" not in task and "data" not in task:  # JSON_MIN: data and choices side by side
            item = _item(registry, task.get("item_id"), where)
            decision = _decision(task.get(DECISION_CONTROL), where)
            found.append((where, item, decision, task.get("annotator"), task.get("updated_at") or task.get("created_at"),
                          f"label-studio:{p.name}:task {task.get('id', '?')}"))
            continue
        data = task.get("data")
        if not isinstance(data, dict):
            raise ReviewInputError(f"{where}: a task needs a 'data' object")
        item = _item(registry, data.get("item_id"), where)
        annotations = task.get("annotations") or []
        if not isinstance(annotations, list):
            raise ReviewInputError(f"{where}: 'annotations' must be a list")
        if not annotations:
            result.unannotated += 1
        for a in annotations:
            if not isinstance(a, dict):
                raise ReviewInputError(f"{where}: each annotation must be a JSON object")
            if a.get("was_cancelled"):
                result.cancelled += 1
                continue
            choices = [r for r in a.get("result") or [] if isinstance(r, dict) and r.get("type") == "choices"
                       and r.get("from_name") == DECISION_CONTROL]
            if len(choices) != 1:
                raise ReviewInputError(f"{where}: annotation {a.get('id', '?')} has no '{DECISION_CONTROL}' choice "
                                       "(import the labeling config written by express review export)")
            picked = (choices[0].get("value") or {}).get("choices") or []
            if len(picked) != 1:
                raise ReviewInputError(f"{where}: annotation {a.get('id', '?')} must choose exactly one of accept/reject")
            decision = _decision(picked[0], where)
            found.append((where, item, decision, a.get("completed_by"), a.get("updated_at") or a.get("created_at"),
                          f"label-studio:{p.name}:task {task.get('id', '?')}:annotation {a.get('id', '?')}"))
    annotators = {_annotator(who) for _, _, _, who, _, _ in found}
    if reviewer and len(annotators) > 1:
        raise ReviewInputError(f"{p}: --reviewer names one reviewer but the export holds annotations by "
                               f"{len(annotators)} users ({', '.join(sorted(annotators))}); import it without --reviewer")
    for where, item, decision, who, when, source in found:
        result.entries.append(_entry(item, decision, reviewer or _annotator(who), _time(when, where), source))
    if not result.entries and not result.cancelled and not result.unannotated:
        raise ReviewInputError(f"{p}: no tasks found")
    return result
