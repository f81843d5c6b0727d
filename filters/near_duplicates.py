"""Near-duplicate filter: MinHash signatures of word shingles, banded LSH, candidates verified.

Stateful. `check` keeps, per kept post, its signature (num_perm * 4 bytes) and one entry per LSH
band (~1.3 KB per kept post at 64 permutations), so its memory grows with kept posts. A sharded
build makes the same decisions with the state in DuckDB (filters/near_index.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import regex

from schemas.records import RawPost

_WORD = regex.compile(r"\w+")
# Multiply-xorshift mixing (splitmix64 constants): a band key is the same in every process, unlike
# hash(), so keys written by parallel shard steps can be matched later.
_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))


def shingles(text: str, n: int) -> set[bytes]:
    """Word n-grams of the lower-cased text (the whole text when it is shorter than n words)."""
    words = _WORD.findall(text.lower())
    if len(words) <= n:
        return {" ".join(words).encode()}
    return {" ".join(words[i:i + n]).encode() for i in range(len(words) - n + 1)}


def band_keys(sigs: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """(n, bands) uint64: one key per LSH band of each signature row, salted with the band's number
    so one table can hold every band: equal keys mean the same band with the same values.

    64-bit mixing of the band's `rows` values: two different bands share a key with probability
    ~2**-64, and every process computes the same keys."""
    sigs = np.asarray(sigs, dtype=np.uint32).reshape(-1, sigs.shape[-1])
    keys = np.broadcast_to(np.arange(1, bands + 1, dtype=np.uint64), (sigs.shape[0], bands))
    with np.errstate(over="ignore"):
        for j in range(rows):
            keys = (keys ^ sigs[:, j:bands * rows:rows].astype(np.uint64)) * _MIX[0]
            keys ^= keys >> np.uint64(31)
        keys = (keys ^ (keys >> np.uint64(30))) * _MIX[1]
        keys = (keys ^ (keys >> np.uint64(27))) * _MIX[2]
    return keys ^ (keys >> np.uint64(31))


@dataclass
class NearDuplicateFilter:
    """Drops a post whose estimated Jaccard similarity to a kept post reaches `threshold`.

    A post is compared, band by band, with the first kept post that had the same band key; the
    first band whose post is similar enough drops it."""

    stateful: ClassVar[bool] = True
    threshold: float = 0.8
    num_perm: int = 64
    shingle_words: int = 3
    name: str = "near_duplicate"
    _template: Any = field(init=False, repr=False)
    _minhash: Any = field(init=False, repr=False)
    _firsts: dict[int, int] = field(init=False, repr=False)  # band key -> first kept post (index in _sigs)
    _sigs: list[np.ndarray] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        from datasketch import MinHash, MinHashLSH  # here: importing it costs ~0.8 s, and most recipes never do

        self._minhash = MinHash
        self._template = MinHash(num_perm=self.num_perm, seed=1)
        # datasketch picks bands x rows; weighted towards few false negatives, candidates are verified.
        probe = MinHashLSH(threshold=self.threshold, num_perm=self.num_perm, weights=(0.05, 0.95))
        self._b, self._r = probe.b, probe.r
        self._firsts, self._sigs = {}, []

    def signature(self, text: str) -> np.ndarray:
        m = self._minhash(num_perm=self.num_perm, permutations=self._template.permutations, scheme=self._template.scheme)
        m.update_batch(shingles(text, self.shingle_words))
        return m.hashvalues.astype(np.uint32)

    def band_keys(self, sigs: np.ndarray) -> np.ndarray:
        return band_keys(sigs, self._b, self._r)

    def similar(self, a: np.ndarray, b: np.ndarray) -> bool:
        return bool(self.similar_rows(a, b))

    def similar_rows(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Row by row of two signature matrices (or one pair): estimated Jaccard >= threshold."""
        return np.count_nonzero(a == b, axis=-1) / self.num_perm >= self.threshold

    def check(self, post: RawPost) -> str | None:
        return self.check_signature(self.signature(post.text))

    def check_signature(self, sig: np.ndarray) -> str | None:
        """`check` for a post whose signature was computed already (in parallel, per shard)."""
        keys = self.band_keys(sig)[0].tolist()
        for key in keys:
            other = self._firsts.get(key)
            if other is not None and self.similar(self._sigs[other], sig):
                return self.name
        idx = len(self._sigs)
        self._sigs.append(sig)
        for key in keys:
            self._firsts.setdefault(key, idx)
        return None
