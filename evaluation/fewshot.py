"""Few-shot example selection from the training split: random or nearest, same mask count, other posts.

Nearest uses sentence embeddings when `sentence-transformers` and a model directory are available,
TF-IDF cosine similarity otherwise; the backend used is recorded with the run.
"""
from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from evaluation.prompts import mask_count

Shot = dict[str, Any]


def _keep(row: dict[str, Any]) -> Shot:
    # Only what a prompt may show: never the unmasked text.
    return {"post_id": row["post_id"], "segment_index": row.get("segment_index", 0),
            "masked_text": row["masked_text"], "surfaces": list(row["surfaces"])}


class TfidfEmbedder:
    name = "tfidf"

    def __init__(self) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vectorizer = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=1, stop_words="english")

    def fit(self, texts: list[str]) -> None:
        self.vectorizer.fit(texts)

    def encode(self, texts: list[str]) -> Any:
        return self.vectorizer.transform(texts)  # rows are L2-normalised, so a dot product is cosine


class SentenceEmbedder:
    """Sentence-transformers model from a local directory (optional extra)."""

    name = "sentence-embeddings"

    def __init__(self, model_dir: str) -> None:
        from sentence_transformers import SentenceTransformer  # optional dependency

        self.model = SentenceTransformer(model_dir)
        self.name = f"sentence-embeddings:{model_dir}"

    def fit(self, texts: list[str]) -> None:
        return None

    def encode(self, texts: list[str]) -> Any:
        return np.asarray(self.model.encode(texts, normalize_embeddings=True))


def make_embedder(model_dir: str = "") -> TfidfEmbedder | SentenceEmbedder:
    if model_dir:
        try:
            return SentenceEmbedder(model_dir)
        except ImportError:
            pass
    return TfidfEmbedder()


class ShotPool:
    """Training examples grouped by mask count, for `select(target, n, how)`."""

    def __init__(self, rows: Iterable[dict[str, Any]], seed: int = 0, embedding_model: str = "") -> None:
        self.seed = seed
        self.by_k: dict[int, list[Shot]] = defaultdict(list)
        for row in rows:
            self.by_k[mask_count(row["masked_text"])].append(_keep(row))
        self.embedding_model = embedding_model
        self._embedder: TfidfEmbedder | SentenceEmbedder | None = None
        self._matrices: dict[int, Any] = {}

    def __len__(self) -> int:
        return sum(len(v) for v in self.by_k.values())

    @property
    def backend(self) -> str:
        return self._embedder.name if self._embedder else "none"

    def _candidates(self, target: dict[str, Any]) -> tuple[list[int], list[Shot]]:
        pool = self.by_k.get(mask_count(target["masked_text"]), [])
        idx = [i for i, s in enumerate(pool) if s["post_id"] != target["post_id"]]
        return idx, pool

    def select(self, target: dict[str, Any], n: int, how: str) -> list[Shot]:
        if n <= 0 or how == "none":
            return []
        idx, pool = self._candidates(target)
        if how == "random":
            # Seeded per target, so a shot list does not depend on the order examples are scored in.
            rng = random.Random(f"{self.seed}:{target['post_id']}:{target.get('segment_index', 0)}")
            return [pool[i] for i in rng.sample(idx, min(n, len(idx)))]
        if how == "nearest":
            return self._nearest(target, idx, pool, n)
        raise ValueError(f"unknown few-shot selection '{how}'")

    def _nearest(self, target: dict[str, Any], idx: list[int], pool: list[Shot], n: int) -> list[Shot]:
        if not idx:
            return []
        if self._embedder is None:
            self._embedder = make_embedder(self.embedding_model)
            self._embedder.fit([s["masked_text"] for shots in self.by_k.values() for s in shots])
        k = mask_count(target["masked_text"])
        if k not in self._matrices:
            self._matrices[k] = self._embedder.encode([s["masked_text"] for s in pool])
        sims = self._matrices[k] @ self._embedder.encode([target["masked_text"]]).T
        sims = np.asarray(sims.todense() if hasattr(sims, "todense") else sims).ravel()
        best = sorted(idx, key=lambda i: (-sims[i], i))[:n]
        return [pool[i] for i in reversed(best)]  # the most similar example sits next to the target
