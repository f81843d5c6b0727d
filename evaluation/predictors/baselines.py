"""Offline baselines that learn from the release's train split as a user would.

- most-frequent: the most frequent train label for every mask.
- all-zero: the paper's all-zero-vector baseline (a word outside the decomposition).
- context-lexicon: the emotion words written elsewhere in the example (nearest first), then the
  training prior. EXPRESS found the human word often matches other emotion terms in context.
- tfidf-logreg: TF-IDF over the words around each mask + logistic regression, trained on train.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from schemas.lexicon import lexicon_terms

from evaluation.predictors.base import (MASK, BasePredictor, Item, Prediction, PredictorOptions, TrainItem, label_counts,
                                   ranked_labels)

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


class MostFrequentLabel(BasePredictor):
    """Answers every mask with the most frequent label of the training split (ties: alphabetical)."""

    name = "most-frequent"

    def __init__(self, options: PredictorOptions | None = None) -> None:
        super().__init__(options)
        self.labels = ["happy"]

    def fit(self, train: Iterable[TrainItem]) -> None:
        labels = ranked_labels(label_counts(train))
        if labels:
            self.labels = labels

    def predict(self, item: Item) -> str:
        return repr([self.labels[0]] * item.n_masks)

    def ranked(self, item: Item) -> list[list[str]]:
        return [self.labels[: self.options.top_k]] * item.n_masks


class AllZeroVector(BasePredictor):
    """The paper's all-zero baseline: a word absent from the decomposition, so its vector is 0."""

    name = "all-zero"
    word = "<none>"

    def predict(self, item: Item) -> str:
        return repr([self.word] * item.n_masks)


class ContextLexicon(BasePredictor):
    """Per mask: the nearest emotion word elsewhere in the text, else the most frequent train label."""

    name = "context-lexicon"

    def __init__(self, options: PredictorOptions | None = None) -> None:
        super().__init__(options)
        self.prior = ["happy"]
        self.vocabulary: frozenset[str] = lexicon_terms()

    def fit(self, train: Iterable[TrainItem]) -> None:
        counts = label_counts(train)
        if counts:
            self.prior = ranked_labels(counts)
            # Only lexicon words people actually used as labels: drops "like" and stems such as "worri".
            self.vocabulary = frozenset(w for w in counts if w in lexicon_terms())

    def _candidates(self, text: str) -> list[list[str]]:
        masks = [m.start() for m in re.finditer(re.escape(MASK), text)]
        words = [(m.start(), m.group().lower()) for m in _WORD.finditer(text) if m.group().lower() in self.vocabulary]
        out = []
        for pos in masks:
            seen: list[str] = []
            for _, w in sorted(words, key=lambda pw: abs(pw[0] - pos)):
                if w not in seen:
                    seen.append(w)
            out.append(seen)
        return out

    def ranked(self, item: Item) -> list[list[str]]:
        k = self.options.top_k
        out = []
        for found in self._candidates(item.masked_text):
            out.append((found + [w for w in self.prior if w not in found])[:k])
        return out

    def predict(self, item: Item) -> str:
        return repr([r[0] for r in self.ranked(item)])


def mask_contexts(text: str, width: int) -> list[str]:
    """One string per mask: `width` words either side, the mask as TARGET, other masks as OTHER."""
    parts = text.split(MASK)
    out = []
    for i in range(len(parts) - 1):
        left = " OTHERMASK ".join(parts[: i + 1]).split()[-width:]
        right = " OTHERMASK ".join(parts[i + 1:]).split()[:width]
        out.append(" ".join([*left, "TARGETMASK", *right]))
    return out


class TfidfLogReg(BasePredictor):
    """Logistic regression over TF-IDF of each mask's context; labels seen fewer than twice are dropped."""

    name = "tfidf-logreg"
    min_count = 2

    def __init__(self, options: PredictorOptions | None = None) -> None:
        super().__init__(options)
        self.pipeline: Any = None
        self.classes: list[str] = []
        self.trained_on = 0

    def fit(self, train: Iterable[TrainItem]) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline

        texts: list[str] = []
        labels: list[str] = []
        for t in train:
            contexts = mask_contexts(t.masked_text, self.options.context_words)
            if len(contexts) != len(t.surfaces):
                continue  # a row whose masks and labels disagree teaches nothing
            texts.extend(contexts)
            labels.extend(s.lower() for s in t.surfaces)
        counts = Counter(labels)
        keep = [i for i, y in enumerate(labels) if counts[y] >= self.min_count]
        if len({labels[i] for i in keep}) < 2:
            raise ValueError(f"tfidf-logreg needs at least two labels seen {self.min_count}+ times in train; "
                             f"got {len(labels)} masks")
        self.pipeline = make_pipeline(
            TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, max_features=100_000),
            LogisticRegression(max_iter=1000, C=4.0, random_state=self.options.seed),
        )
        self.pipeline.fit([texts[i] for i in keep], [labels[i] for i in keep])
        self.classes = [str(c) for c in self.pipeline.classes_]
        self.trained_on = len(keep)

    def ranked(self, item: Item) -> list[list[str]]:
        if self.pipeline is None:
            raise RuntimeError("tfidf-logreg: call fit() on the train split first")
        contexts = mask_contexts(item.masked_text, self.options.context_words)
        if not contexts:
            return []
        probs = self.pipeline.predict_proba(contexts)
        k = self.options.top_k
        return [[self.classes[j] for j in row.argsort()[::-1][:k]] for row in probs]

    def predict(self, item: Item) -> str:
        return repr([r[0] for r in self.ranked(item)][: item.n_masks])

    def predict_many(self, items: list[Item]) -> list[Prediction]:
        out = []
        for item in items:
            ranked = self.ranked(item)
            out.append(Prediction(repr([r[0] for r in ranked]), ranked))
        return out

    def describe(self) -> dict[str, Any]:
        return {"classes": len(self.classes), "trained_masks": self.trained_on}
