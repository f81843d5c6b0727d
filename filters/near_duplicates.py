"""Near-duplicate filter: MinHash signatures of word shingles, banded LSH, candidates verified.

Stateful: per kept post it keeps the signature (num_perm * 4 bytes) and one int per LSH band
(about 1.5 KB per kept post at 64 permutations), so memory grows with kept posts only.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import regex

from schemas.records import RawPost

_WORD = regex.compile(r"\w+")


def shingles(text: str, n: int) -> set[bytes]:
    """Word n-grams of the lower-cased text (the whole text when it is shorter than n words)."""
    words = _WORD.findall(text.lower())
    if len(words) <= n:
        return {" ".join(words).encode()}
    return {" ".join(words[i:i + n]).encode() for i in range(len(words) - n + 1)}


@dataclass
class NearDuplicateFilter:
    """Drops a post whose estimated Jaccard similarity to a kept post reaches `threshold`."""

    stateful: ClassVar[bool] = True
    threshold: float = 0.8
    num_perm: int = 64
    shingle_words: int = 3
    name: str = "near_duplicate"
    _template: Any = field(init=False, repr=False)
    _minhash: Any = field(init=False, repr=False)
    _bands: list[dict[int, int]] = field(init=False, repr=False)
    _sigs: list[np.ndarray] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        from datasketch import MinHash, MinHashLSH  # here: importing it costs ~0.8 s, and most recipes never do

        self._minhash = MinHash
        self._template = MinHash(num_perm=self.num_perm, seed=1)
        # datasketch picks bands x rows; weighted towards few false negatives, candidates are verified.
        probe = MinHashLSH(threshold=self.threshold, num_perm=self.num_perm, weights=(0.05, 0.95))
        self._b, self._r = probe.b, probe.r
        self._bands = [{} for _ in range(self._b)]
        self._sigs = []

    def signature(self, text: str) -> np.ndarray:
        m = self._minhash(num_perm=self.num_perm, permutations=self._template.permutations, scheme=self._template.scheme)
        m.update_batch(shingles(text, self.shingle_words))
        return m.hashvalues.astype(np.uint32)

    def check(self, post: RawPost) -> str | None:
        return self.check_signature(self.signature(post.text))

    def check_signature(self, sig: np.ndarray) -> str | None:
        """`check` for a post whose signature was computed already (in parallel, per shard)."""
        keys = [hash(sig[i * self._r:(i + 1) * self._r].tobytes()) for i in range(self._b)]
        for band, key in zip(self._bands, keys):
            other = band.get(key)
            if other is not None and np.count_nonzero(self._sigs[other] == sig) / self.num_perm >= self.threshold:
                return "near_duplicate"
        idx = len(self._sigs)
        self._sigs.append(sig)
        for band, key in zip(self._bands, keys):
            band.setdefault(key, idx)
        return None
