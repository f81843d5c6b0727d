"""Statistics over per-row scores: seeded bootstrap intervals, paired Wilcoxon test, Cohen's d.

Per-row arrays (masks, word hits, vector hits, F1 sum, valid) are enough to recompute every
EXPRESS metric on a resample, so intervals use the same definitions as the point estimates.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

RowArrays = dict[str, np.ndarray]


def express_from_weights(rows: RowArrays, w: np.ndarray) -> dict[str, float]:
    """The metrics with row weights (1 each for the sample itself, resample counts for a bootstrap)."""
    masks = float(w @ rows["masks"])
    valid_masks = float(w @ (rows["masks"] * rows["valid"]))
    n = float(w.sum())
    out = {
        "AccL": float(w @ rows["word_hits"]) / masks if masks else 0.0,
        "AccV": float(w @ rows["vector_hits"]) / masks if masks else 0.0,
        "F1V": float(w @ (rows["f1_sum"] * rows["valid"])) / valid_masks if valid_masks else 0.0,
        "VRate": float(w @ rows["valid"]) / n if n else 0.0,
    }
    if "hamming_sum" in rows:
        out["Hamming"] = float(w @ rows["hamming_sum"]) / masks if masks else 0.0
    return out


def percentile_intervals(draws: dict[str, list[float]], level: float = 0.95) -> dict[str, list[float]]:
    """[low, high] per name: the central `level` share of its bootstrap draws."""
    lo, hi = (1 - level) / 2 * 100, (1 + level) / 2 * 100
    return {name: [float(np.percentile(v, lo)), float(np.percentile(v, hi))] for name, v in draws.items()}


def bootstrap_intervals(rows: RowArrays, samples: int = 1000, seed: int = 0,
                        level: float = 0.95) -> dict[str, list[float]]:
    """Percentile intervals from resampling rows with replacement; seeded, so reruns agree."""
    n = len(rows["masks"])
    if n == 0 or samples <= 0:
        return {}
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {}
    for _ in range(samples):
        w = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
        for name, value in express_from_weights(rows, w).items():
            draws.setdefault(name, []).append(value)
    return percentile_intervals(draws, level)


def row_arrays(scores: list[Any]) -> RowArrays:
    """Per-row arrays of RowScores (evaluation/scoring/metrics.py): enough for AccL, AccV, F1V and VRate."""
    return {"masks": np.array([s.masks for s in scores], dtype=float),
            "word_hits": np.array([s.word_hits for s in scores], dtype=float),
            "vector_hits": np.array([s.vector_hits for s in scores], dtype=float),
            "f1_sum": np.array([s.f1_sum for s in scores], dtype=float),
            "valid": np.array([float(s.valid) for s in scores], dtype=float)}


def bootstrap_difference(a: RowArrays, b: RowArrays, samples: int = 1000, seed: int = 0,
                         level: float = 0.95) -> dict[str, list[float]]:
    """Percentile intervals of metric(b) - metric(a), resampling each group's rows on its own (the
    groups are different rows, not pairs); seeded, so reruns agree."""
    na, nb = len(a["masks"]), len(b["masks"])
    if not na or not nb or samples <= 0:
        return {}
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {}
    for _ in range(samples):
        wa = rng.multinomial(na, np.full(na, 1.0 / na)).astype(float)
        wb = rng.multinomial(nb, np.full(nb, 1.0 / nb)).astype(float)
        ma, mb = express_from_weights(a, wa), express_from_weights(b, wb)
        for name in ma:
            draws.setdefault(name, []).append(mb[name] - ma[name])
    return percentile_intervals(draws, level)


def cohens_d_paired(diff: np.ndarray) -> float | None:
    """d_z: mean paired difference over its standard deviation (None when undefined)."""
    if len(diff) < 2:
        return None
    sd = float(np.std(diff, ddof=1))
    mean = float(np.mean(diff))
    if sd == 0:
        return 0.0 if mean == 0 else None
    return mean / sd


def wilcoxon_p(diff: np.ndarray) -> float | None:
    """Two-sided paired Wilcoxon signed-rank p-value; 1.0 when the runs never differ."""
    from scipy.stats import wilcoxon

    diff = diff[~np.isnan(diff)]
    if len(diff) == 0:
        return None
    if not np.any(diff):
        return 1.0
    p = float(wilcoxon(diff, zero_method="wilcox", alternative="two-sided").pvalue)
    return None if math.isnan(p) else p


def paired_test(a: np.ndarray, b: np.ndarray) -> dict[str, float | int | None]:
    """Compare per-row scores of two runs on the same rows (NaN rows are left out)."""
    keep = ~(np.isnan(a) | np.isnan(b))
    diff = b[keep] - a[keep]
    return {"n": int(keep.sum()), "mean_a": float(a[keep].mean()) if keep.any() else None,
            "mean_b": float(b[keep].mean()) if keep.any() else None,
            "wilcoxon_p": wilcoxon_p(diff), "cohens_d": cohens_d_paired(diff)}

