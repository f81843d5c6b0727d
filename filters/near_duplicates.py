"""Near-duplicate filter: MinHash signatures of word shingles in an LSH index (datasketch).

Stateful: the index holds one signature per kept post (num_perm * 8 bytes plus LSH
buckets), so memory grows with the number of kept posts, not with what is dropped.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import regex
from datasketch import MinHash, MinHashLSH

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
    _lsh: Any = field(init=False, repr=False)
    _perm: Any = field(init=False, repr=False)
    _scheme: Any = field(init=False, repr=False)
    _n: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        # LSH tuned for few false negatives; candidates are then checked against the threshold.
        self._lsh = MinHashLSH(threshold=self.threshold, num_perm=self.num_perm, weights=(0.05, 0.95))
        self._sigs: dict[str, MinHash] = {}
        template = MinHash(num_perm=self.num_perm, seed=1)
        self._perm, self._scheme = template.permutations, template.scheme

    def signature(self, text: str) -> MinHash:
        m = MinHash(num_perm=self.num_perm, permutations=self._perm, scheme=self._scheme)
        m.update_batch(shingles(text, self.shingle_words))
        return m

    def check(self, post: RawPost) -> str | None:
        sig = self.signature(post.text)
        if any(sig.jaccard(self._sigs[key]) >= self.threshold for key in self._lsh.query(sig)):
            return "near_duplicate"
        self._n += 1
        self._sigs[str(self._n)] = sig
        self._lsh.insert(str(self._n), sig)
        return None
