"""Canonical-level accuracy (AccC): AccL after collapsing gold and predicted words to concepts.

The paper's AccL counts "guilt" for gold "guilty" as wrong; AccC counts it right because both
collapse to the same canonical label. As in AccL, the denominator is ALL masks: a row whose
prediction is missing or has the wrong length counts every mask as wrong, and so does a
predicted word that maps to no label (outside the vocabulary or excluded). A gold word that maps
to no label can never be matched; it is counted in `gold_unmapped` so the gap is visible
(with the shipped vocabulary every gold label of the EXPRESS release maps).
"""
from __future__ import annotations

from collections.abc import Iterable

from schemas.vocabulary import Vocabulary, default_vocabulary


def canonical_hits(gold: list[str], predicted: list[str] | None, vocabulary: Vocabulary) -> int:
    """Masks of one row whose predicted word has the same canonical label as the gold word."""
    if predicted is None or len(predicted) != len(gold):
        return 0
    hits = 0
    for g, p in zip(gold, predicted):
        label = vocabulary.canonical(g)
        hits += label is not None and vocabulary.canonical(p) == label
    return hits


def canonical_scores(pairs: Iterable[tuple[list[str], list[str] | None]],
                     vocabulary: Vocabulary | None = None) -> dict[str, float | int | str]:
    """AccC over (gold surface words, parsed predicted words or None) pairs, with its counts.

    Returns {"AccC", "rows", "masks", "hits", "gold_unmapped", "pred_unmapped", "vocabulary_version"};
    `pred_unmapped` counts predicted words of valid rows that map to no label.
    """
    vocab = vocabulary or default_vocabulary()
    rows = masks = hits = gold_unmapped = pred_unmapped = 0
    for gold, predicted in pairs:
        rows += 1
        masks += len(gold)
        gold_unmapped += sum(vocab.canonical(g) is None for g in gold)
        if predicted is not None and len(predicted) == len(gold):
            pred_unmapped += sum(vocab.canonical(p) is None for p in predicted)
        hits += canonical_hits(gold, predicted, vocab)
    return {"AccC": hits / masks if masks else 0.0, "rows": rows, "masks": masks, "hits": hits,
            "gold_unmapped": gold_unmapped, "pred_unmapped": pred_unmapped,
            "vocabulary_version": vocab.version}


def canonical_accuracy(pairs: Iterable[tuple[list[str], list[str] | None]],
                       vocabulary: Vocabulary | None = None) -> float:
    """AccC alone: canonical-label matches / all masks (0.0 when there are no masks)."""
    return float(canonical_scores(pairs, vocabulary)["AccC"])
