"""Presidio, imported once without torch: every privacy module imports it through here first.

Presidio imports torch and transformers when they are installed (for recognizers we do not use):
15-20 s per process here. Imported with both hidden, its optional imports fall back."""
from __future__ import annotations

from common.hidden_imports import hidden

with hidden("torch", "transformers"):
    import presidio_analyzer.predefined_recognizers  # noqa: F401
    import presidio_anonymizer  # noqa: F401

from collections.abc import Callable  # noqa: E402

from presidio_analyzer import LocalRecognizer, RecognizerResult  # noqa: E402


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
