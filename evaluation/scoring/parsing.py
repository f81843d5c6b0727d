"""Parse a model's raw answer into a list of words, as the EXPRESS scorer does, but robustly.

In order: the whole answer as a Python/JSON list literal (or a JSON object holding one list, as
the `json` prompt variant asks for: {"answers": [...]}); the text after the last "Answer:"
marker; the last bracketed list (reasoning first, answer last); comma/newline-separated bare
words; the last line. None means the answer could not be read as a list (the row is INVALID).
"""
from __future__ import annotations

import ast
import json
import re

_LIST = re.compile(r"\[[^\[\]]*\]", re.S)
_FENCE = re.compile(r"```[a-zA-Z]*\s*(.*?)```", re.S)
_MARKER = re.compile(r"(?:final answer|answer|predictions?|masked words|words)\s*(?:is|are)?\s*[:：=]", re.I)
_NUMBERING = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s*")
_STRIP = " \t\"'`*.;:!"
MAX_BARE_WORDS = 2  # a bare answer item longer than this is prose, not a word


def _as_words(value: object) -> list[str] | None:
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    if isinstance(value, (list, tuple)) and all(isinstance(v, (str, int, float)) for v in value):
        return [str(v).strip() for v in value]
    return None


def _literal(text: str) -> list[str] | None:
    for loader in (json.loads, ast.literal_eval):
        try:
            words = _as_words(loader(text))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if words is not None:
            return words
    return None


def _bare(text: str) -> list[str] | None:
    """Comma/newline-separated words ("sad, lonely", "1. sad\\n2. lonely", "[sad, lonely]")."""
    text = text.strip().strip("[]")
    items = [_NUMBERING.sub("", part).strip(_STRIP) for part in re.split(r"[,\n]", text)]
    items = [i for i in items if i]
    if items and all(len(i.split()) <= MAX_BARE_WORDS for i in items):
        return items
    return None


def _from_block(text: str) -> list[str] | None:
    words = _literal(text.strip())
    if words is not None:
        return words
    for block in reversed(_LIST.findall(text)):
        words = _literal(block) or _bare(block)
        if words is not None:
            return words
    return None


def parse_answer(answer: str | None) -> list[str] | None:
    """The list of words in `answer`, or None if it holds no list."""
    if answer is None:
        return None
    text = answer.strip()
    if not text:
        return None
    words = _literal(text)
    if words is not None:
        return words
    fences = _FENCE.findall(text)
    if fences and (words := _from_block(fences[-1])) is not None:
        return words
    markers = list(_MARKER.finditer(text))
    if markers:
        tail = text[markers[-1].end():].strip()
        first_line = tail.splitlines()[0] if tail else ""
        for candidate in (_from_block(tail), _bare(first_line)):
            if candidate is not None:
                return candidate
    words = _from_block(text)
    if words is not None:
        return words
    words = _bare(text)
    if words is not None:
        return words
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return _bare(lines[-1]) if len(lines) > 1 else None


def parse_ranked(value: object) -> list[list[str]] | None:
    """Ranked answers per mask ([["sad", "upset"], ["lonely"]]) from a list or its JSON string."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return None
    if isinstance(value, list) and all(isinstance(v, list) for v in value):
        return [[str(w) for w in v] for v in value]
    return None


def parse_labels(value: object) -> list[str]:
    """Gold labels from a list or from the release's Python-list string ("['sad', 'angry']")."""
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str):
        words = _literal(value.strip())
        if words is not None:
            return words
    raise ValueError(f"cannot read gold labels from {value!r}")
