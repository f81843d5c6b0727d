"""Near-duplicate filter: MinHash signatures of word shingles, banded LSH, candidates verified.

Stateful. `check` keeps, per kept post, its signature (num_perm * 4 bytes) and one entry per LSH
band, so its memory grows with kept posts. A sharded
build makes the same decisions with the state in DuckDB (filters/near_index.py).
"""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from schemas.records import RawPost

_WORD = re.compile(r"\w+")  # a word, for the signatures and the shingles alike (the stdlib's: cheaper than `regex`)
# Multiply-xorshift mixing (splitmix64 constants): a band key is the same in every process, unlike
# hash(), so keys written by parallel shard steps can be matched later.
_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))
# ASCII text -> its lower-cased `\w` characters, every other byte a space: split() then gives the
# words `\w+` finds in the lower-cased text, without a regex scan
_ASCII_WORDS = bytes(b + 32 if 65 <= b <= 90 else b if chr(b).isalnum() and b < 128 or b == 95 else 32
                     for b in range(256))


def _splitmix64(seed: int, n: int) -> list[int]:
    """n 64-bit values of the splitmix64 sequence: fixed constants for every process and version."""
    out, x, m = [], seed, (1 << 64) - 1
    for _ in range(n):
        x = (x + 0x9E3779B97F4A7C15) & m
        z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & m
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
        out.append(z ^ (z >> 31))
    return out


def word_ids(text: str) -> np.ndarray:
    r"""CRC-32 of each word (`\w+`) of the lower-cased text, in order, as uint64."""
    if text.isascii():
        words = text.encode("ascii").translate(_ASCII_WORDS).split()
    else:
        words = [w.encode("utf-8", "surrogatepass") for w in _WORD.findall(text.lower())]
    return np.fromiter(map(zlib.crc32, words), dtype=np.uint64, count=len(words))


class MinHasher:
    """MinHash signatures of word n-gram shingles in numpy, cheaper than datasketch's MinHash
    over SHA-1 (bench/filters.py --part minhash: on the tests' corpora its drops differ from
    datasketch's only as much as datasketch's with another seed do).

    A shingle's hash mixes its words' CRC-32s with one odd multiplier per position (order counts),
    and permutation k is the multiply-shift hash (a_k * h + b_k) mod 2**64, top 32 bits; the
    minimum is taken before the shift (a monotone map keeps the minimum) and over repeated
    shingles as well (the minimum of a multiset is that of its set). Constants come from
    splitmix64, so every process computes the same signature."""

    def __init__(self, num_perm: int, shingle_words: int, seed: int = 1):
        values = _splitmix64(seed, 2 * num_perm + shingle_words)
        self.a = np.array([v | 1 for v in values[:num_perm]], dtype=np.uint64)
        self.b = np.array(values[num_perm:2 * num_perm], dtype=np.uint64)
        self.position = [np.uint64(v | 1) for v in values[2 * num_perm:]]
        self.n = shingle_words

    def shingle_hashes(self, ids: np.ndarray) -> np.ndarray:
        """One hash per n-gram of the word ids (one for the whole text when it has fewer words)."""
        m = max(1, len(ids) - self.n + 1)
        h = np.zeros(m, dtype=np.uint64)
        with np.errstate(over="ignore"):
            for j in range(min(self.n, len(ids))):
                h ^= ids[j:j + m] * self.position[j]
            h ^= h >> np.uint64(31)
            return h * _MIX[1]

    def signature(self, text: str) -> np.ndarray:
        h = self.shingle_hashes(word_ids(text))
        with np.errstate(over="ignore"):
            return ((np.multiply.outer(h, self.a) + self.b).min(axis=0) >> np.uint64(32)).astype(np.uint32)


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
    _hasher: MinHasher = field(init=False, repr=False)
    _firsts: dict[int, int] = field(init=False, repr=False)  # band key -> first kept post (index in _sigs)
    _sigs: list[np.ndarray] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        from datasketch import MinHashLSH  # here: its import is slow, and most recipes never need it

        self._hasher = MinHasher(self.num_perm, self.shingle_words)
        # datasketch picks bands x rows; weighted towards few false negatives, candidates are verified.
        probe = MinHashLSH(threshold=self.threshold, num_perm=self.num_perm, weights=(0.05, 0.95))
        self._b, self._r = probe.b, probe.r
        self._firsts, self._sigs = {}, []

    def signature(self, text: str) -> np.ndarray:
        return self._hasher.signature(text)

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
