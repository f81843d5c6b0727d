"""Inter-rater agreement for human validation: Cohen's kappa per pair, Fleiss' kappa,
Krippendorff's alpha (nominal), from rater files (the coefficients are in common.agreement).

Input: one rater per file, each a CSV or JSONL with `id` and `label`, or a .txt with one label
per line (the line number is the item). An empty label means the rater skipped the item.
"""
from __future__ import annotations

import csv
from itertools import combinations
from pathlib import Path
from typing import Any

from common.agreement import cohen_kappa, fleiss_kappa, krippendorff_alpha_nominal
from common.csv_rows import rows_with_start_lines
from common.jsonl import parse_jsonl

Ratings = dict[str, str]


def read_ratings(path: str | Path) -> Ratings:
    """item id -> label for one rater; errors name the file and line."""
    p = Path(path)
    out: Ratings = {}
    with open(p, encoding="utf-8", newline="") as fh:
        if p.suffix.lower() == ".txt":
            for line_no, line in enumerate(fh, start=1):
                if line.strip():
                    out[str(line_no)] = line.strip()
            return out
        if p.suffix.lower() == ".csv":
            reader = csv.DictReader(fh)
            if not {"id", "label"} <= set(reader.fieldnames or []):
                raise ValueError(f"{p}: needs columns 'id' and 'label' (found {reader.fieldnames})")
            rows = rows_with_start_lines(reader)
        else:
            rows = parse_jsonl(fh, p)
        for line_no, row in rows:
            if "id" not in row or "label" not in row:
                raise ValueError(f"{p}:{line_no}: needs 'id' and 'label'")
            item, label = str(row["id"]), ("" if row["label"] is None else str(row["label"]).strip())
            if item in out:
                raise ValueError(f"{p}:{line_no}: item '{item}' rated twice")
            if label:
                out[item] = label
    return out


def agreement(files: list[str | Path]) -> dict[str, Any]:
    """All three statistics for one rater per file, on the items each statistic can use."""
    if len(files) < 2:
        raise ValueError("agreement needs at least two rater files")
    raters = [read_ratings(f) for f in files]
    names = [Path(f).name for f in files]
    pairs = []
    for (i, a), (j, b) in combinations(enumerate(raters), 2):
        common = sorted(set(a) & set(b))
        pairs.append({"a": names[i], "b": names[j], "items": len(common),
                      "agreement": sum(a[x] == b[x] for x in common) / len(common) if common else None,
                      "cohen_kappa": cohen_kappa([a[x] for x in common], [b[x] for x in common]) if common else None})
    items = sorted(set().union(*raters))
    complete = [x for x in items if all(x in r for r in raters)]
    categories = sorted({label for r in raters for label in r.values()})
    table = [[sum(r[x] == c for r in raters) for c in categories] for x in complete]
    units = [[r[x] for r in raters if x in r] for x in items]
    return {"raters": names, "items": len(items), "categories": len(categories), "pairs": pairs,
            "fleiss_kappa": fleiss_kappa(table) if table else None, "fleiss_items": len(complete),
            "krippendorff_alpha": krippendorff_alpha_nominal(units), "krippendorff_units": sum(len(u) >= 2 for u in units)}
