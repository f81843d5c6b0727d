"""Score a predictions file (JSONL or the EXPRESS release's CSV) with the EXPRESS metrics."""
from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from common.csv_rows import rows_with_start_lines
from common.jsonl import read_jsonl
from evaluation.scoring.metrics import express_scores
from evaluation.scoring.parsing import parse_answer, parse_labels
from schemas.lexicon import Decomposition


GOLD_FIELDS = ("surfaces", "labels")  # our runs' name for the gold words, then the EXPRESS release's


def read_predictions(path: str | Path, labels_field: str | None = None,
                     output_field: str = "output") -> Iterator[tuple[list[str], str | None]]:
    """(gold words, raw answer) per row; the gold words are `labels_field`, else `surfaces`, else
    `labels`. Errors name the file and line. A file without a row is an error: scoring it would
    print all zeros as if a model had answered everything wrongly."""
    p = Path(path)
    rows = 0
    for pair in _pairs(p, labels_field, output_field):
        rows += 1
        yield pair
    if not rows:
        raise ValueError(f"{p}: no predictions in the file (it is empty or holds only a header or blank lines)")


def _pairs(p: Path, labels_field: str | None, output_field: str) -> Iterator[tuple[list[str], str | None]]:
    if p.suffix.lower() == ".csv":
        # utf-8-sig: a spreadsheet's byte-order mark would otherwise be part of the first column's name
        with open(p, encoding="utf-8-sig", newline="") as fh:
            reader = csv.DictReader(fh)
            if reader.fieldnames is None:
                return  # not even a header: empty
            labels_field = labels_field or _gold_field(reader.fieldnames or [])
            for field in (labels_field, output_field):
                if field not in (reader.fieldnames or []):
                    raise ValueError(f"{p}: no column '{field}' (columns: {reader.fieldnames})")
            for line_no, row in rows_with_start_lines(reader):
                yield _pair(row, p, line_no, labels_field, output_field)
        return
    for line_no, row in read_jsonl(p):
        yield _pair(row, p, line_no, labels_field, output_field)


def _gold_field(keys: Any) -> str:
    return next((f for f in GOLD_FIELDS if f in keys), GOLD_FIELDS[0])


def _pair(row: dict[str, Any], p: Path, line_no: int, labels_field: str | None,
          output_field: str) -> tuple[list[str], str | None]:
    field = labels_field or _gold_field(row)
    if field not in row or output_field not in row:
        gold = f"'{labels_field}'" if labels_field else " or ".join(f"'{f}'" for f in GOLD_FIELDS)
        raise ValueError(f"{p}:{line_no}: row needs {gold} and '{output_field}'")
    try:
        labels = parse_labels(row[field])
    except ValueError as exc:
        raise ValueError(f"{p}:{line_no}: {exc}") from exc
    if not labels:  # a row of no masks scores nothing: 0.0 for it would be a number about no answer
        raise ValueError(f"{p}:{line_no}: '{field}' is empty: a row needs at least one gold word")
    out = row[output_field]
    if out is None and "error" not in row:  # a run's failed request says why it has no answer; else a gap
        raise ValueError(f"{p}:{line_no}: '{output_field}' is null: no answer to score (a run's failed request "
                         "carries its 'error' and counts as an invalid answer)")
    return labels, out if out is None or isinstance(out, str) else json.dumps(out)


def score_file(path: str | Path, dec: Decomposition, labels_field: str | None = None,
               output_field: str = "output") -> dict[str, float | int]:
    pairs = ((g, parse_answer(o)) for g, o in read_predictions(path, labels_field, output_field))
    return express_scores(pairs, dec)
