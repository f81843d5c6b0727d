"""Keyed fingerprints of a taken-down post's text, to find it again once the text itself is gone.

A text is its sequence of words (lower case, `\\w+`, HTML entities read), so JSON escapes, HTML
entities, markup and spacing do not hide it. Its fingerprint is (keyed hash of its first word, its
length in words, keyed hash of all its words, its head): the ledger holds no word of it, and a
string holds the text when the same words follow each other there. The head is a value of its first
HEAD words computed from each word's keyed hash (a polynomial over them, modulo 2**64), so a search
computes the head at every word of a string at once (numpy) and hashes a whole run of words only
where a head matches. Fingerprints made before heads had three parts: they are found by their first
word, as then. Texts shorter than MIN_WORDS are not
fingerprinted: a few common words would be found in other posts too (the post's id still finds it).
"""
from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterable
from typing import Any

import numpy as np

MIN_WORDS = 12
HEAD = 8  # words of a text's head (fewer than MIN_WORDS)
_POWERS = np.array([pow(0x9E3779B97F4A7C15, j, 2**64) for j in range(HEAD)], dtype=np.uint64)
SEEN_WORDS = 2_000_000  # distinct words remembered before the memory starts again (a dump has many)
_WORD = re.compile(r"\w+")
# ASCII letters, digits and `_` (what \w matches in ASCII) kept, lower-cased; every other byte a space
_ASCII_WORDS = bytes(c + 32 if 65 <= c <= 90 else c if chr(c).isalnum() and c < 128 or c == 95 else 32
                     for c in range(256))

Fingerprint = tuple[Any, ...]  # (first word, words, all words, first HEAD words): keyed hashes; older ones lack the head


def words(text: str) -> list[bytes]:
    """The words of a text as fingerprints see them (lower case, `\\w+`; Reddit's JSON writes `&` as
    `&amp;`), UTF-8 encoded. Most texts are ASCII: their words are cut in C (the same words)."""
    if "&" in text:
        text = html.unescape(text)
    if text.isascii():
        return text.encode().translate(_ASCII_WORDS).split()
    return [w.encode() for w in _WORD.findall(text.lower())]


def _hash(key: bytes, value: bytes, size: int) -> str:
    return hashlib.blake2b(value, key=key[:64], digest_size=size).hexdigest()


def _value(key: bytes, word: bytes) -> int:
    """A word's keyed hash as a 64-bit number: what heads are made of."""
    return int(_hash(key, word, 8), 16)


def _heads(values: np.ndarray) -> np.ndarray:
    """The head at each word of a text (its word values), as many as there are runs of HEAD words:
    sum of values[i + j] * _POWERS[j]; uint64 wraps, i.e. modulo 2**64."""
    n = len(values) - HEAD + 1
    heads = values[:n] * _POWERS[0]
    for j in range(1, HEAD):
        heads += values[j:j + n] * _POWERS[j]
    return heads


def fingerprint(key: bytes, text: str) -> Fingerprint | None:
    ws = words(text)
    if len(ws) < MIN_WORDS:
        return None
    head = int(_heads(np.array([_value(key, w) for w in ws[:HEAD]], dtype=np.uint64))[0])
    return _hash(key, ws[0], 8), len(ws), _hash(key, b" ".join(ws), 16), f"{head:016x}"


class TextFinder:
    """Which taken-down posts a string holds the text of. Each distinct word is hashed once; the
    heads at every word are computed together and looked up, and only where one is a text's head
    is the run of words hashed whole (older, headless fingerprints: where their first word is)."""

    def __init__(self, key: bytes, prints: Iterable[tuple[str, Fingerprint]]):
        self.key = key
        self.by_head: dict[int, list[tuple[int, str, str]]] = {}  # head -> (words, all words, post)
        self.headless: dict[str, list[tuple[int, str, str]]] = {}  # first word -> the same, for older prints
        for post, (first, n, full, *head) in prints:
            into, at = (self.by_head, int(head[0], 16)) if head else (self.headless, first)
            into.setdefault(at, []).append((int(n), full, post))
        self._heads = np.array(sorted(self.by_head), dtype=np.uint64)
        self._values: dict[bytes, int] = {}  # words seen so far -> their value
        self._firsts: dict[bytes, str] = {}  # of those, the first words of a headless print -> their hash

    def __bool__(self) -> bool:
        return bool(self.by_head or self.headless)

    def _learn(self, new: set[bytes]) -> None:
        for w in new:
            h = _hash(self.key, w, 8)
            self._values[w] = int(h, 16)
            if h in self.headless:
                self._firsts[w] = h

    def posts_in(self, text: str) -> set[str]:
        if not text or not (self.by_head or self.headless):
            return set()
        ws = words(text)
        if len(ws) < MIN_WORDS:
            return set()
        try:
            values = np.fromiter(map(self._values.__getitem__, ws), dtype=np.uint64, count=len(ws))
        except KeyError:  # a word not seen before
            new = set(ws).difference(self._values)
            if len(self._values) + len(new) > SEEN_WORDS:  # a dump has many words: forget, then learn again
                self._values, self._firsts, new = {}, {}, set(ws)
            self._learn(new)
            values = np.fromiter(map(self._values.__getitem__, ws), dtype=np.uint64, count=len(ws))
        found: set[str] = set()
        starts: list[tuple[int, list[tuple[int, str, str]]]] = []
        if self.by_head:
            heads = _heads(values)
            at = np.minimum(np.searchsorted(self._heads, heads), len(self._heads) - 1)
            starts += [(i, self.by_head[int(heads[i])]) for i in np.flatnonzero(self._heads[at] == heads)]
        if self._firsts:
            starts += [(i, self.headless[self._firsts[w]]) for i, w in enumerate(ws) if w in self._firsts]
        for i, candidates in starts:
            for n, full, post in candidates:
                if post not in found and i + n <= len(ws) and _hash(self.key, b" ".join(ws[i:i + n]), 16) == full:
                    found.add(post)
        return found
