"""The EXPRESS metrics: AccL, AccV, F1V and VRate, exactly as the paper defines them.

- A row is INVALID when its parsed answer is missing or has a different length than its labels.
- AccL: lower-cased exact word matches over ALL masks (invalid rows count as wrong).
- AccV: exact 10-dim vector matches over ALL masks.
- F1V: mean, over the masks of VALID rows, of binary F1 between gold and predicted vectors
  (scikit-learn's f1_score(average="binary", zero_division=0): two all-zero vectors give 0).
- VRate: valid rows / rows.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only for annotations: `express export lm-eval` ships this file as it is, on its own
    from schemas.lexicon import Decomposition, Vector


def binary_f1(gold: Vector, pred: Vector) -> float:
    tp = sum(1 for g, p in zip(gold, pred) if g and p)
    fp = sum(1 for g, p in zip(gold, pred) if p and not g)
    fn = sum(1 for g, p in zip(gold, pred) if g and not p)
    denom = 2 * tp + fp + fn
    return 0.0 if denom == 0 else 2 * tp / denom


@dataclass(frozen=True)
class RowScore:
    valid: bool
    masks: int
    word_hits: int
    vector_hits: int
    f1_sum: float


def score_row(gold: list[str], predicted: list[str] | None, dec: Decomposition) -> RowScore:
    if predicted is None or len(predicted) != len(gold):
        return RowScore(False, len(gold), 0, 0, 0.0)
    word_hits = vector_hits = 0
    f1_sum = 0.0
    for g, p in zip(gold, predicted):
        gv, pv = dec.vector(g), dec.vector(p)
        word_hits += g.strip().lower() == p.strip().lower()
        vector_hits += gv == pv
        f1_sum += binary_f1(gv, pv)
    return RowScore(True, len(gold), word_hits, vector_hits, f1_sum)


def aggregate(rows: Iterable[RowScore]) -> dict[str, float | int]:
    n = masks = valid = valid_masks = words = vectors = 0
    f1 = 0.0
    for r in rows:
        n += 1
        masks += r.masks
        words += r.word_hits
        vectors += r.vector_hits
        if r.valid:
            valid += 1
            valid_masks += r.masks
            f1 += r.f1_sum
    return {
        "AccL": words / masks if masks else 0.0,
        "AccV": vectors / masks if masks else 0.0,
        "F1V": f1 / valid_masks if valid_masks else 0.0,
        "VRate": valid / n if n else 0.0,
        "rows": n,
        "masks": masks,
    }


def express_scores(pairs: Iterable[tuple[list[str], list[str] | None]], dec: Decomposition) -> dict[str, float | int]:
    """Score (gold labels, parsed prediction) pairs."""
    return aggregate(score_row(g, p, dec) for g, p in pairs)
