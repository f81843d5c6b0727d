"""Parse a model's raw answer into a list of words, as the EXPRESS scorer does.

A Python or JSON list literal is read as such; otherwise the last bracketed list in the answer,
then comma/newline-separated bare words. None means the answer could not be read as a list.
"""
from __future__ import annotations

import ast
import json
import re

_LIST = re.compile(r"\[[^\[\]]*\]", re.S)


def _as_words(value: object) -> list[str] | None:
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
    for block in reversed(_LIST.findall(text)):  # reasoning first, answer last
        words = _literal(block)
        if words is not None:
            return words
    lines = [ln.strip(" -*\t\"'") for ln in re.split(r"[,\n]", text) if ln.strip(" -*\t\"'")]
    if lines and all(len(w.split()) <= 2 for w in lines):
        return lines
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
