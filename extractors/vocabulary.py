"""Collapse masked surface words into canonical vocabulary labels, counting what cannot be collapsed.

A surface keeps its place in the example whatever happens (examples carry both `surfaces` and
`labels`); a word that is excluded or outside the vocabulary keeps its normalized surface as its
label and is counted in the unmapped report, so nothing is lost silently.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from schemas.vocabulary import Vocabulary, default_vocabulary, normalize

NOT_IN_VOCABULARY = "not_in_vocabulary"
EXCLUDED = "excluded"


def label_for(surface: str, vocabulary: Vocabulary | None = None) -> str:
    """The canonical label of a masked surface word; its normalized surface when it has none."""
    vocab = vocabulary or default_vocabulary()
    return vocab.canonical(surface) or normalize(surface)


class Collapser:
    """Maps surfaces to labels and keeps the counts behind the run's `unmapped.json` report."""

    def __init__(self, vocabulary: Vocabulary | None = None):
        self.vocabulary = vocabulary or default_vocabulary()
        self.masks = 0
        self.labels: Counter[str] = Counter()
        self.unmapped: Counter[str] = Counter()

    def collapse(self, surface: str) -> str | None:
        """The canonical label, or None (counted as unmapped) when the word is excluded or unknown."""
        self.masks += 1
        label = self.vocabulary.canonical(surface)
        if label is None:
            self.unmapped[normalize(surface)] += 1
        else:
            self.labels[label] += 1
        return label

    def observe(self, surfaces: Iterable[str]) -> list[str | None]:
        return [self.collapse(s) for s in surfaces]

    def why(self, word: str) -> str:
        return EXCLUDED if self.vocabulary.excluded(word) else NOT_IN_VOCABULARY

    def report(self) -> dict[str, Any]:
        """JSON-able counts: masks = mapped + unmapped, with each unmapped word and why."""
        by_reason: Counter[str] = Counter()
        words = []
        for word, n in sorted(self.unmapped.items(), key=lambda kv: (-kv[1], kv[0])):
            why = self.why(word)
            by_reason[why] += n
            words.append({"surface": word, "count": n, "reason": why, "note": self.vocabulary.reason(word)})
        unmapped = sum(self.unmapped.values())
        return {
            "vocabulary_version": self.vocabulary.version,
            "masks": self.masks,
            "mapped": self.masks - unmapped,
            "unmapped": unmapped,
            "labels": len(self.labels),
            "by_reason": dict(sorted(by_reason.items())),
            "words": words,
        }

    def summary(self) -> dict[str, Any]:
        """The report without its word list, small enough for a stage result or a manifest."""
        return {k: v for k, v in self.report().items() if k != "words"}
