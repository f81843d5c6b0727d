"""Predictors: each turns examples into raw answer strings, as a model's reply would be.

A registry maps names to classes so the CLI and config can pick one by name. Answers are
strings (not lists) so every predictor goes through the same parser as an LLM's reply; a
predictor may add ranked answers per mask (for top-k accuracy) and token usage.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from schemas.config import EvaluateConfig

PREDICTORS: dict[str, type["Predictor"]] = {}
MASK = "<mask>"


_D = EvaluateConfig()  # defaults live in the recipe schema, once


@dataclass
class PredictorOptions:
    """Everything a predictor may be configured with (from [evaluate] in the recipe, env or CLI)."""

    setting: str = _D.setting
    model: str = _D.model
    base_url: str = _D.base_url
    api_key: str = field(default="", repr=False)  # never stored, never logged
    api_key_env: str = _D.api_key_env  # the variable the key is read from when api_key is empty
    concurrency: int = _D.concurrency
    timeout: float = _D.timeout
    max_retries: int = _D.max_retries
    backoff: float = _D.backoff
    temperature: float = _D.temperature
    max_tokens: int = _D.max_tokens
    seed: int = _D.seed
    context_words: int = _D.context_words
    top_k: int = _D.top_k
    cache_dir: str = ""
    prompts_file: str = _D.prompts_file
    embedding_model: str = _D.embedding_model

    def public(self) -> dict[str, Any]:
        """The options as stored with a run: without the key."""
        out = asdict(self)
        out.pop("api_key")
        return out


@dataclass
class Prediction:
    output: str | None
    ranked: list[list[str]] | None = None
    usage: dict[str, int] | None = None
    cached: bool = False
    error: str | None = None
    shots: list[str] | None = None  # post ids of the few-shot examples shown


class Predictor(Protocol):
    name: str
    uses_prompts: bool

    def fit(self, train: Iterable[dict[str, Any]]) -> None: ...

    def predict(self, example: dict[str, Any]) -> str: ...

    def predict_many(self, examples: list[dict[str, Any]]) -> list[Prediction]: ...

    def describe(self) -> dict[str, Any]: ...


def register(cls: type) -> type:
    PREDICTORS[cls.name] = cls
    return cls


def get_predictor(name: str, options: PredictorOptions | None = None) -> Predictor:
    if name not in PREDICTORS:
        raise KeyError(f"unknown predictor '{name}'; known: {', '.join(sorted(PREDICTORS))}")
    return PREDICTORS[name](options or PredictorOptions())


def n_masks(example: dict[str, Any]) -> int:
    return example["masked_text"].count(MASK)


def label_counts(train: Iterable[dict[str, Any]]) -> Counter[str]:
    return Counter(label.lower() for row in train for label in row["surfaces"])


def ranked_labels(counts: Counter[str]) -> list[str]:
    """Labels by frequency, ties alphabetical, so baselines are deterministic."""
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


class BasePredictor:
    """Defaults for offline predictors: no prompts, one example at a time."""

    name = "base"
    uses_prompts = False

    def __init__(self, options: PredictorOptions | None = None) -> None:
        self.options = options or PredictorOptions()

    def fit(self, train: Iterable[dict[str, Any]]) -> None:
        return None

    def predict(self, example: dict[str, Any]) -> str:
        raise NotImplementedError

    def ranked(self, example: dict[str, Any]) -> list[list[str]] | None:
        return None

    def predict_many(self, examples: list[dict[str, Any]]) -> list[Prediction]:
        return [Prediction(self.predict(e), self.ranked(e)) for e in examples]

    def describe(self) -> dict[str, Any]:
        return {}


@register
class MostFrequentLabel(BasePredictor):
    """Answers every mask with the most frequent label of the training split (ties: alphabetical)."""

    name = "most-frequent"

    def __init__(self, options: PredictorOptions | None = None) -> None:
        super().__init__(options)
        self.labels = ["happy"]

    def fit(self, train: Iterable[dict[str, Any]]) -> None:
        labels = ranked_labels(label_counts(train))
        if labels:
            self.labels = labels

    def predict(self, example: dict[str, Any]) -> str:
        return repr([self.labels[0]] * n_masks(example))

    def ranked(self, example: dict[str, Any]) -> list[list[str]]:
        return [self.labels[: self.options.top_k]] * n_masks(example)


@register
class AllZeroVector(BasePredictor):
    """The paper's all-zero baseline: a word absent from the decomposition, so its vector is 0."""

    name = "all-zero"
    word = "<none>"

    def predict(self, example: dict[str, Any]) -> str:
        return repr([self.word] * n_masks(example))


# The other predictors register themselves on import.
from evaluation import baselines, chat, fill_mask  # noqa: E402,F401
