"""Presidio's pieces the privacy modules share: every privacy module imports Presidio through here.

Presidio imports torch and transformers when they are installed, for recognizers we do not use;
whether a build lets it is the runtime's choice (flows/runtime/models.py)."""
from __future__ import annotations

from collections.abc import Callable

import presidio_analyzer.predefined_recognizers  # noqa: F401
import presidio_anonymizer  # noqa: F401
from presidio_analyzer import LocalRecognizer, RecognizerResult


class FoundSpans(LocalRecognizer):
    """A Presidio recognizer over a function that finds [start, end) spans in a text (our own
    recognizers are plain functions: privacy/numbers.py, privacy/addresses.py)."""

    def __init__(self, entity: str, find: Callable[[str], list[tuple[int, int]]], score: float, name: str) -> None:
        self._find, self._score = find, score
        super().__init__(supported_entities=[entity], name=name, context=[])

    def load(self) -> None:
        pass

    def analyze(self, text: str, entities: list[str], nlp_artifacts=None) -> list[RecognizerResult]:
        entity = self.supported_entities[0]
        return [RecognizerResult(entity, a, b, self._score) for a, b in self._find(text)]
