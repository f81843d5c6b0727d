"""Keyed fingerprints of a taken-down post's text, to find it again once the text itself is gone.

A text is its sequence of words (lower case, `\\w+`, HTML entities read), so JSON escapes, HTML
entities, markup and spacing do not hide it. Its fingerprint is (keyed hash of its first word, its
length in words, keyed hash of all its words): the ledger holds no word of it, and a string holds
the text when the same words follow each other there. Texts shorter than MIN_WORDS are not
fingerprinted: a few common words would be found in other posts too (the post's id still finds it).
"""
from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterable

MIN_WORDS = 12
SEEN_WORDS = 2_000_000  # distinct words remembered before the memory starts again (a dump has many)
_WORD = re.compile(r"\w+")

Fingerprint = tuple[str, int, str]  # (first word, words, all words): keyed hashes, hex


def words(text: str) -> list[str]:
    """The words of a text as fingerprints see them (Reddit's JSON writes `&` as `&amp;`)."""
    return _WORD.findall((html.unescape(text) if "&" in text else text).lower())


def _hash(key: bytes, value: str, size: int) -> str:
    return hashlib.blake2b(value.encode("utf-8"), key=key[:64], digest_size=size).hexdigest()


def fingerprint(key: bytes, text: str) -> Fingerprint | None:
    ws = words(text)
    if len(ws) < MIN_WORDS:
        return None
    return _hash(key, ws[0], 8), len(ws), _hash(key, " ".join(ws), 16)


class TextFinder:
    """Which taken-down posts a string holds the text of. Each distinct word is hashed once; a
    string whose words include no fingerprinted text's first word is passed over with set
    operations alone, and the whole sequence is hashed only where such a first word stands."""

    def __init__(self, key: bytes, prints: Iterable[tuple[str, Fingerprint]]):
        self.key = key
        self.by_first: dict[str, list[tuple[int, str, str]]] = {}
        for post, (first, n, full) in prints:
            self.by_first.setdefault(first, []).append((int(n), full, post))
        self._seen: set[str] = set()  # words hashed so far
        self._firsts: dict[str, str] = {}  # of those, the first words of a text -> their hash

    def __bool__(self) -> bool:
        return bool(self.by_first)

    def _learn(self, new: set[str]) -> None:
        for w in new:
            h = _hash(self.key, w, 8)
            if h in self.by_first:
                self._firsts[w] = h
        self._seen |= new

    def posts_in(self, text: str) -> set[str]:
        if not self.by_first or not text:
            return set()
        ws = words(text)
        distinct = set(ws)
        if new := distinct - self._seen:
            if len(self._seen) + len(new) > SEEN_WORDS:  # forget, then learn this text's words again
                self._seen, self._firsts, new = set(), {}, distinct
            self._learn(new)
        if distinct.isdisjoint(self._firsts):
            return set()
        found = set()
        for i, w in enumerate(ws):
            h = self._firsts.get(w)
            if h is None:
                continue
            for n, full, post in self.by_first[h]:
                if post not in found and i + n <= len(ws) and _hash(self.key, " ".join(ws[i:i + n]), 16) == full:
                    found.add(post)
        return found
