"""Keyed fingerprints of a taken-down post's text, to find it again once the text itself is gone.

A text is its sequence of words (lower case, `\\w+`), so JSON escapes, HTML entities and spacing do
not hide it. Its fingerprint is (keyed hash of its first word, its length in words, keyed hash of
all its words): the ledger holds no word of it, and a file holds the text when the same words
follow each other there. Texts shorter than MIN_WORDS are not fingerprinted: a few common words
would be found in other posts too (the post's id still finds it).
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

MIN_WORDS = 12
_WORD = re.compile(r"\w+")

Fingerprint = tuple[str, int, str]  # (first word, words, all words): keyed hashes, hex


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _hash(key: bytes, value: str, size: int) -> str:
    return hashlib.blake2b(value.encode("utf-8"), key=key[:64], digest_size=size).hexdigest()


def fingerprint(key: bytes, text: str) -> Fingerprint | None:
    ws = words(text)
    if len(ws) < MIN_WORDS:
        return None
    return _hash(key, ws[0], 8), len(ws), _hash(key, " ".join(ws), 16)


class TextFinder:
    """Which taken-down posts a string holds the text of. Each distinct word is hashed once; the
    whole sequence is hashed only where a fingerprinted text's first word stands."""

    def __init__(self, key: bytes, prints: Iterable[tuple[str, Fingerprint]]):
        self.key = key
        self.by_first: dict[str, list[tuple[int, str, str]]] = {}
        for post, (first, n, full) in prints:
            self.by_first.setdefault(first, []).append((int(n), full, post))
        self._first: dict[str, str] = {}

    def __bool__(self) -> bool:
        return bool(self.by_first)

    def posts_in(self, text: str) -> set[str]:
        if not self.by_first or not text:
            return set()
        ws, found = words(text), set()
        for i, w in enumerate(ws):
            h = self._first.get(w)
            if h is None:
                h = self._first[w] = _hash(self.key, w, 8)
            for n, full, post in self.by_first.get(h, ()):
                if post not in found and i + n <= len(ws) and _hash(self.key, " ".join(ws[i:i + n]), 16) == full:
                    found.add(post)
        return found
