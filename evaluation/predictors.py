"""Predictors: each turns examples into raw answer strings, as a model's reply would be.

A registry maps names to classes so the CLI and config can pick one by name. Answers are
strings (not lists) so every predictor goes through the same parser as an LLM's reply.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, Protocol

PREDICTORS: dict[str, type["Predictor"]] = {}


class Predictor(Protocol):
    name: str

    def fit(self, train: Iterable[dict[str, Any]]) -> None: ...

    def predict(self, example: dict[str, Any]) -> str: ...


def register(cls: type) -> type:
    PREDICTORS[cls.name] = cls
    return cls


def get_predictor(name: str, **options: Any) -> Predictor:
    try:
        return PREDICTORS[name](**options)
    except KeyError:
        raise KeyError(f"unknown predictor '{name}'; known: {', '.join(sorted(PREDICTORS))}") from None


@register
class MostFrequentLabel:
    """Answers every mask with the most frequent label of the training split (ties: alphabetical)."""

    name = "most-frequent"

    def __init__(self) -> None:
        self.label = "happy"

    def fit(self, train: Iterable[dict[str, Any]]) -> None:
        counts = Counter(label.lower() for row in train for label in row["surfaces"])
        if counts:
            self.label = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]

    def predict(self, example: dict[str, Any]) -> str:
        return repr([self.label] * example["masked_text"].count("<mask>"))


@register
class AllZeroVector:
    """The paper's all-zero baseline: a word absent from the decomposition, so its vector is 0."""

    name = "all-zero"
    word = "<none>"

    def fit(self, train: Iterable[dict[str, Any]]) -> None:
        return None

    def predict(self, example: dict[str, Any]) -> str:
        return repr([self.word] * example["masked_text"].count("<mask>"))
