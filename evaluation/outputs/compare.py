"""Compare two runs on the same rows: metric differences, paired Wilcoxon test and Cohen's d.

Rows are paired by (post_id, segment_index), and only where both runs scored the same gold words.
Both runs are on one release, or one on a withdrawn release and the other on its successor (a
takedown's next version: the parent's rows less those taken down). Per-row scores: AccL and AccV as
the share of a row's masks that match, F1V as the row's mean F1 (rows valid in both runs only),
VRate as 0/1.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from schemas.lexicon import Decomposition

from evaluation.scoring.metrics import RowScore, aggregate, score_row
from evaluation.run_numbers import read_run_predictions
from evaluation.outputs.runs import StoredRun, release_dir
from evaluation.scoring.stats import paired_test
from warehouse.releases.integrity import read_manifest
from warehouse.layout import ReleasePaths, Warehouse
from warehouse.ledgers.withdrawn import withdrawal

METRICS = ("AccL", "AccV", "F1V", "VRate")


def _rows(run: StoredRun, dec: Decomposition) -> dict[tuple[str, int], tuple[list[str], RowScore]]:
    return {(r["post_id"], int(r["segment_index"])): (r["surfaces"], score_row(r["surfaces"], r["parsed"], dec))
            for r in read_run_predictions(run.path)}


def replaced_by(wh: Warehouse, earlier: str, later: str) -> bool:
    """Whether `later` succeeds the withdrawn `earlier`: the withdrawal records lead from one to the
    other, and `later`'s manifest names parents back to `earlier`."""
    chain, at = [earlier], earlier
    while (record := withdrawal(release_dir(wh, at))) and record.get("successor") not in (None, *chain):
        at = record["successor"]
        chain.append(at)
    if later not in chain[1:]:
        return False
    seen, at = set(), later
    while at and at not in seen:
        seen.add(at)
        folder = release_dir(wh, at)
        at = read_manifest(folder).get("parent") if ReleasePaths(folder).manifest.exists() else None
        if at == earlier:
            return True
    return False


def _check_rows(a: StoredRun, b: StoredRun, wh: Warehouse) -> str | None:
    """Refuse runs that cannot share rows; the note names a release and its successor."""
    if a.config.get("split") != b.config.get("split"):
        raise ValueError(f"runs differ in split: {a.config.get('split')} vs {b.config.get('split')}; "
                         "compare runs on the same rows")
    ra, rb = a.config.get("release", ""), b.config.get("release", "")
    if ra == rb:
        return None
    for earlier, later, (x, y) in ((ra, rb, "AB"), (rb, ra, "BA")):
        if replaced_by(wh, earlier, later):
            return f"{earlier} ({x}) was withdrawn; {later} ({y}) is its successor"
    raise ValueError(f"runs differ in release: {ra} vs {rb}, and neither is the other's successor; "
                     "compare runs on the same rows")


def _per_row(scores: list[Any], metric: str) -> np.ndarray:
    if metric == "AccL":
        return np.array([s.word_hits / s.masks for s in scores], dtype=float)
    if metric == "AccV":
        return np.array([s.vector_hits / s.masks for s in scores], dtype=float)
    if metric == "F1V":
        return np.array([s.f1_sum / s.masks if s.valid else np.nan for s in scores], dtype=float)
    return np.array([float(s.valid) for s in scores], dtype=float)


def compare_runs(a: StoredRun, b: StoredRun, dec: Decomposition, wh: Warehouse) -> dict[str, Any]:
    successor = _check_rows(a, b, wh)
    ra, rb = _rows(a, dec), _rows(b, dec)
    keys = set(ra) & set(rb)
    common = sorted(k for k in keys if ra[k][0] == rb[k][0])
    if not common:
        raise ValueError(f"runs {a.run_id} and {b.run_id} share no rows")
    sa, sb = [ra[k][1] for k in common], [rb[k][1] for k in common]
    ma, mb = aggregate(sa), aggregate(sb)
    out: dict[str, Any] = {"a": a.run_id, "b": b.run_id, "rows": len(common),
                           "only_a": len(ra) - len(keys), "only_b": len(rb) - len(keys),
                           "gold_differs": len(keys) - len(common),
                           "releases": {"a": a.config.get("release"), "b": b.config.get("release")},
                           "successor": successor,
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
             f"paired rows: {result['rows']} (only in A: {result['only_a']}, only in B: {result['only_b']}"
             + (f", gold words differ: {result['gold_differs']}" if result.get("gold_differs") else "") + ")"]
    if result.get("successor"):
        lines.append(f"{result['successor']}: rows paired by post and segment, "
                     f"{result['only_a'] + result['only_b'] + result.get('gold_differs', 0)} left out")
    if windows["a"] != windows["b"]:
        lines.append("the runs scored different windows: only the rows both scored are compared")
    lines += ["", f"{'metric':<7} {'A':>8} {'B':>8} {'B-A':>8} {'p (Wilcoxon)':>13} {'d':>7}"]
    for m, r in result["metrics"].items():
        star = " *" if r["wilcoxon_p"] is not None and r["wilcoxon_p"] < alpha else ""
        lines.append(f"{m:<7} {r['a']:>8.4f} {r['b']:>8.4f} {r['delta']:>+8.4f} "
                     f"{num(r['wilcoxon_p'], '{:.3g}'):>13} {num(r['cohens_d'], '{:+.3f}'):>7}{star}")
    lines.append(f"\n* p < {alpha} (two-sided paired Wilcoxon signed-rank test); d = Cohen's d of paired differences")
    return "\n".join(lines)
