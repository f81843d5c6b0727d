"""Inter-rater agreement for human validation: Cohen's kappa per pair, Fleiss' kappa,
Krippendorff's alpha (nominal). Implemented here, checked against textbook examples.

Input: one rater per file, each a CSV or JSONL with `id` and `label`, or a .txt with one label
per line (the line number is the item). An empty label means the rater skipped the item.
"""
from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any

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
            rows = ((n, r) for n, r in enumerate(reader, start=2))
        else:
            rows = ((n, _json_line(p, n, line)) for n, line in enumerate(fh, start=1) if line.strip())
        for line_no, row in rows:
            if "id" not in row or "label" not in row:
                raise ValueError(f"{p}:{line_no}: needs 'id' and 'label'")
            item, label = str(row["id"]), ("" if row["label"] is None else str(row["label"]).strip())
            if item in out:
                raise ValueError(f"{p}:{line_no}: item '{item}' rated twice")
            if label:
                out[item] = label
    return out


def _json_line(p: Path, line_no: int, line: str) -> dict[str, Any]:
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}:{line_no}: not valid JSON ({exc.msg})") from exc


def cohen_kappa(a: list[str], b: list[str]) -> float:
    """(p_o - p_e) / (1 - p_e) for two raters on the same items."""
    n = len(a)
    if n == 0 or n != len(b):
        raise ValueError("cohen_kappa needs two equally long, non-empty rating lists")
    p_o = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    p_e = sum(ca[c] * cb[c] for c in ca) / (n * n)
    return 1.0 if p_e == 1 else (p_o - p_e) / (1 - p_e)


def fleiss_kappa(table: list[list[int]]) -> float:
    """Fleiss' kappa from an items x categories table of counts (same number of raters per item)."""
    if not table:
        raise ValueError("fleiss_kappa needs at least one item")
    n = sum(table[0])
    if n < 2 or any(sum(row) != n for row in table):
        raise ValueError("fleiss_kappa needs the same number (>= 2) of ratings for every item")
    items = len(table)
    p_bar = sum((sum(c * c for c in row) - n) / (n * (n - 1)) for row in table) / items
    p_j = [sum(row[j] for row in table) / (items * n) for j in range(len(table[0]))]
    p_e = sum(p * p for p in p_j)
    return 1.0 if p_e == 1 else (p_bar - p_e) / (1 - p_e)


def krippendorff_alpha_nominal(units: list[list[str]]) -> float:
    """Alpha for nominal data; each unit lists the labels it got (missing ratings simply absent)."""
    coincidence: dict[tuple[str, str], float] = defaultdict(float)
    for values in units:
        m = len(values)
        if m < 2:
            continue  # a unit rated once cannot be paired
        for i, j in ((i, j) for i in range(m) for j in range(m) if i != j):
            coincidence[(values[i], values[j])] += 1 / (m - 1)
    n_c: Counter[str] = Counter()
    for (c, _), v in coincidence.items():
        n_c[c] += v
    n = sum(n_c.values())
    if n <= 1:
        raise ValueError("krippendorff_alpha needs at least one unit rated twice")
    observed = sum(v for (c, k), v in coincidence.items() if c != k)
    expected = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k)
    return 1.0 if expected == 0 else 1 - (n - 1) * observed / expected


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
