"""Compare two runs on the same rows: metric differences, paired Wilcoxon test and Cohen's d.

Rows are paired by (post_id, segment_index). Per-row scores: AccL and AccV as the share of a
row's masks that match, F1V as the row's mean F1 (rows valid in both runs only), VRate as 0/1.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from schemas.lexicon import Decomposition

from evaluation.metrics import aggregate, score_row
from evaluation.run import read_run_predictions
from evaluation.runs import StoredRun
from evaluation.stats import paired_test

METRICS = ("AccL", "AccV", "F1V", "VRate")


def _rows(run: StoredRun, dec: Decomposition) -> dict[tuple[str, int], Any]:
    return {(r["post_id"], int(r["segment_index"])): score_row(r["surfaces"], r["parsed"], dec)
            for r in read_run_predictions(run.path)}


def _per_row(scores: list[Any], metric: str) -> np.ndarray:
    if metric == "AccL":
        return np.array([s.word_hits / s.masks for s in scores], dtype=float)
    if metric == "AccV":
        return np.array([s.vector_hits / s.masks for s in scores], dtype=float)
    if metric == "F1V":
        return np.array([s.f1_sum / s.masks if s.valid else np.nan for s in scores], dtype=float)
    return np.array([float(s.valid) for s in scores], dtype=float)


def compare_runs(a: StoredRun, b: StoredRun, dec: Decomposition) -> dict[str, Any]:
    for field in ("release", "split"):
        if a.config.get(field) != b.config.get(field):
            raise ValueError(f"runs differ in {field}: {a.config.get(field)} vs {b.config.get(field)}; "
                             "compare runs on the same rows")
    ra, rb = _rows(a, dec), _rows(b, dec)
    common = sorted(set(ra) & set(rb))
    if not common:
        raise ValueError(f"runs {a.run_id} and {b.run_id} share no rows")
    sa, sb = [ra[k] for k in common], [rb[k] for k in common]
    ma, mb = aggregate(sa), aggregate(sb)
    out: dict[str, Any] = {"a": a.run_id, "b": b.run_id, "rows": len(common),
                           "only_a": len(ra) - len(common), "only_b": len(rb) - len(common),
                           "windows": {"a": a.window.label, "b": b.window.label}, "metrics": {}}
    for m in METRICS:
        test = paired_test(_per_row(sa, m), _per_row(sb, m))
        out["metrics"][m] = {"a": ma[m], "b": mb[m], "delta": mb[m] - ma[m],
                             "wilcoxon_p": test["wilcoxon_p"], "cohens_d": test["cohens_d"], "paired_rows": test["n"]}
    return out


def format_comparison(result: dict[str, Any], alpha: float = 0.05) -> str:
    def num(x: float | None, fmt: str = "{:.4f}") -> str:
        return "-" if x is None else fmt.format(x)

    windows = result.get("windows") or {"a": "all", "b": "all"}
    lines = [f"A = {result['a']}  (window {windows['a']})", f"B = {result['b']}  (window {windows['b']})",
             f"paired rows: {result['rows']} (only in A: {result['only_a']}, only in B: {result['only_b']})"]
    if windows["a"] != windows["b"]:
        lines.append("the runs scored different windows: only the rows both scored are compared")
    lines += ["", f"{'metric':<7} {'A':>8} {'B':>8} {'B-A':>8} {'p (Wilcoxon)':>13} {'d':>7}"]
    for m, r in result["metrics"].items():
        star = " *" if r["wilcoxon_p"] is not None and r["wilcoxon_p"] < alpha else ""
        lines.append(f"{m:<7} {r['a']:>8.4f} {r['b']:>8.4f} {r['delta']:>+8.4f} "
                     f"{num(r['wilcoxon_p'], '{:.3g}'):>13} {num(r['cohens_d'], '{:+.3f}'):>7}{star}")
    lines.append(f"\n* p < {alpha} (two-sided paired Wilcoxon signed-rank test); d = Cohen's d of paired differences")
    return "\n".join(lines)
