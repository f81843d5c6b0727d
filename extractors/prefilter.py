"""Cheap regex prefilter: find the sentences worth sending to spaCy.

A sentence is a candidate only if it has a disclosure trigger (feel/felt/feeling, I'm, I am,
I was, I have/had been) and something that starts like a lexicon word. On real Reddit most
sentences fail one of the two, so spaCy sees a small share of the text.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator

import regex

_TRIGGER = regex.compile(
    r"\b(?:feel|feels|feeling|felt)\b"
    r"|\bi\s*['’]?\s*m\b"
    r"|\bi\s+(?:am|was)\b"
    r"|\bi\s*(?:['’]\s*ve|['’]\s*d|\s+have|\s+had)\s+been\b",
    regex.IGNORECASE,
)
# Sentence ends: terminal punctuation followed by space, or line breaks.
_SENT_END = regex.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+|\n+")


def sentence_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) character spans of rough sentences; together they cover the text."""
    start = 0
    for m in _SENT_END.finditer(text):
        if m.start() > start:
            yield start, m.start()
        start = m.end()
    if start < len(text):
        yield start, len(text)


class Prefilter:
    """Selects candidate sentences: a trigger plus a word that starts like a lexicon term."""

    def __init__(self, terms: Iterable[str]):
        heads = sorted({t.split()[0].split("-")[0] for t in terms if t}, key=len, reverse=True)
        self._lexical = regex.compile(r"\b(?:" + "|".join(regex.escape(h) for h in heads) + r")",
                                      regex.IGNORECASE)

    def is_candidate(self, sentence: str) -> bool:
        return _TRIGGER.search(sentence) is not None and self._lexical.search(sentence) is not None

    def candidates(self, text: str) -> Iterator[tuple[int, int]]:
        for start, end in sentence_spans(text):
            if self.is_candidate(text[start:end]):
                yield start, end
