"""The ablation grid of `express sweep`: prompt settings x temperatures x prompt variants.

Each cell is an ordinary stored run (cached answers, run folder, leaderboard row); this module only
spells out the grid and reads the finished runs back into one table. Besides AccL/AccV/F1V it shows
how concentrated the model's answers are (entropy of the answer distribution, share of its most
frequent answer, Jensen-Shannon divergence to the human labels), next to the same measures for the
human labels, so "models answer more uniformly than people" can be read off one table.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from itertools import product
from pathlib import Path
from typing import Any
from warehouse.layout import EvaluationPaths

METRICS = ("AccL", "AccV", "F1V", "VRate")


@dataclass(frozen=True)
class Cell:
    setting: str
    variant: str
    temperature: float


def parse_list(text: str, what: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ValueError(f"{what}: give at least one value (comma-separated)")
    if len(set(items)) != len(items):
        raise ValueError(f"{what}: '{text}' names a value twice")
    return items


def parse_temperatures(text: str) -> list[float]:
    out = []
    for t in parse_list(text, "--temperatures"):
        try:
            value = float(t)
        except ValueError:
            raise ValueError(f"--temperatures: '{t}' is not a number") from None
        if not 0 <= value <= 2:
            raise ValueError(f"--temperatures: {value} is outside 0..2")
        out.append(value)
    return out


def grid(settings: list[str], temperatures: list[float], variants: list[str]) -> list[Cell]:
    """Cells in a stable order: setting, then variant, then temperature."""
    return [Cell(s, v, t) for s, v, t in product(settings, variants, temperatures)]


def cell_row(cell: Cell | dict[str, Any], run_path: str | Path) -> dict[str, Any]:
    """One table row from a finished run folder (its metrics.json and analysis.json)."""
    run = Path(run_path)
    paths = EvaluationPaths(Path(run))
    metrics = json.loads(paths.metrics.read_text())
    dist = json.loads(paths.analysis.read_text())["distribution"]
    c = asdict(cell) if isinstance(cell, Cell) else dict(cell)
    return {**c, "rows": metrics["rows"], **{m: metrics[m] for m in METRICS},
            "entropy_bits": dist["model"]["entropy_bits"], "top_share": dist["model"]["top_share"],
            "js_to_human": dist["jensen_shannon_bits"], "distinct": dist["model"]["distinct"],
            "human_entropy_bits": dist["human"]["entropy_bits"], "human_top_share": dist["human"]["top_share"],
            "human_distinct": dist["human"]["distinct"], "run": run.name}


def format_sweep(rows: list[dict[str, Any]], fmt: str = "text") -> str:
    """The grid, then one line for the human labels (the same examples in every cell)."""
    if fmt == "json":
        return json.dumps(rows, indent=2)
    head = ["setting", "variant", "temp", "rows", "AccL", "AccV", "F1V", "VRate", "entropy", "top_share", "JS_human",
            "distinct", "run"]
    body = [[r["setting"], r["variant"], f"{r['temperature']:g}", str(r["rows"]), *(f"{r[m]:.4f}" for m in METRICS),
             f"{r['entropy_bits']:.3f}", f"{r['top_share']:.3f}", f"{r['js_to_human']:.3f}", str(r["distinct"]), r["run"]]
            for r in rows]
    if rows:
        h = rows[0]
        body.append(["human labels", "-", "-", str(h["rows"]), "-", "-", "-", "-", f"{h['human_entropy_bits']:.3f}",
                     f"{h['human_top_share']:.3f}", "0.000", str(h["human_distinct"]), "-"])
    if fmt == "markdown":
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in body])
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    return "\n".join("  ".join(x.ljust(w) for x, w in zip(row, widths)).rstrip() for row in [head, *body])
