"""Decisions shape the next build: a pure function from a post's masks and the ledger to the masks
that stay. A rejected mask is not masked (its word stays as text); a post left with no mask is
dropped with reason `review_rejected`.

Matching rule: "the same word in the same post is found again". A reviewed word matches a mask of
the same post with the same (normalised) word when
  - the post still has as many masks of that word as when it was reviewed, and it is the same
    occurrence (1st, 2nd, ...): offsets may have moved (PII scrubbing, segmentation), order not; or
  - otherwise, its context (up to 5 words each side, PII placeholders ignored) overlaps the
    reviewed context by at least half.
Each reviewed word matches at most one mask and each mask at most one reviewed word; the best
scores are matched first.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from review.items import context_words, normalize_surface
from review.ledger import Entry, Ledger, consensus, latest_by_reviewer

REASON = "review_rejected"
MIN_CONTEXT_OVERLAP = 0.5


@dataclass(frozen=True)
class ReviewedWord:
    item_id: str
    word: str  # normalised surface
    occurrence: int
    occurrences: int
    left: tuple[str, ...]
    right: tuple[str, ...]
    verdict: str  # accept | reject (consensus of the reviewers)


@dataclass(frozen=True)
class ReviewIndex:
    """The standing verdicts of one ledger version, by post id: built once per build."""

    by_post: dict[str, tuple[ReviewedWord, ...]]
    dataset: str = ""
    version: int = 0
    sha256: str = ""

    @classmethod
    def from_ledger(cls, ledger: Ledger, version: int | None = None) -> "ReviewIndex":
        version = ledger.version if version is None else version
        return cls.from_entries(ledger.read(version), ledger.dataset, version, ledger.sha256(version))

    @classmethod
    def from_entries(cls, entries: Iterable[Entry], dataset: str = "", version: int = 0,
                     sha256: str = "") -> "ReviewIndex":
        by_post: dict[str, list[ReviewedWord]] = {}
        for item_id, per in latest_by_reviewer(entries).items():
            verdict = consensus(per)
            if verdict is None:
                continue
            e = next(iter(per.values()))
            by_post.setdefault(e.post_id, []).append(ReviewedWord(
                item_id, normalize_surface(e.surface), int(e.occurrence), int(e.occurrences),
                tuple(e.left), tuple(e.right), verdict))
        return cls({k: tuple(v) for k, v in by_post.items()}, dataset, version, sha256)

    def describe(self) -> dict[str, Any]:
        """What the manifest records about the review a build used."""
        words = [w for ws in self.by_post.values() for w in ws]
        return {"dataset": self.dataset, "ledger_version": self.version, "ledger_sha256": self.sha256,
                "reviewed_items": len(words), "rejected_items": sum(w.verdict == "reject" for w in words)}


@dataclass
class Applied:
    """The masks of one post after review, in input order."""

    kept: list[Any]
    rejected: list[Any] = field(default_factory=list)
    accepted: list[Any] = field(default_factory=list)
    matched: dict[int, str] = field(default_factory=dict)  # input index -> item_id

    @property
    def reason(self) -> str | None:
        """`review_rejected` when review took away every mask of the post, else None."""
        return REASON if self.rejected and not self.kept else None


def _get(d: Any, name: str) -> Any:
    return d[name] if isinstance(d, Mapping) else getattr(d, name)


def apply_decisions(post_id: str, text: str, masks: Sequence[Any], index: ReviewIndex) -> Applied:
    """Split a post's masks (Disclosure objects or dicts with start/end/surface, offsets in `text`,
    before review) into kept and rejected by the ledger's verdicts."""
    reviewed = index.by_post.get(post_id)
    if not reviewed:
        return Applied(list(masks))
    groups: dict[str, list[int]] = {}
    for m in sorted(range(len(masks)), key=lambda i: _get(masks[i], "start")):
        groups.setdefault(normalize_surface(_get(masks[m], "surface")), []).append(m)
    verdicts: dict[int, ReviewedWord] = {}
    for word, idxs in groups.items():
        words = [w for w in reviewed if w.word == word]
        if words:
            verdicts.update(_match(words, idxs, masks, text))
    out = Applied([])
    for i, m in enumerate(masks):
        w = verdicts.get(i)
        if w is None:
            out.kept.append(m)
            continue
        out.matched[i] = w.item_id
        if w.verdict == "reject":
            out.rejected.append(m)
        else:
            out.accepted.append(m)
            out.kept.append(m)
    return out


def _match(words: list[ReviewedWord], idxs: list[int], masks: Sequence[Any], text: str) -> dict[int, ReviewedWord]:
    n = len(idxs)
    contexts = [context_words(text, _get(masks[i], "start"), _get(masks[i], "end")) for i in idxs]
    pairs = []
    for wi, w in enumerate(words):
        for k, i in enumerate(idxs):
            same_slot = w.occurrences == n and w.occurrence == k
            overlap = context_overlap(w.left, w.right, *contexts[k])
            if same_slot or overlap >= MIN_CONTEXT_OVERLAP:
                closeness = abs(k / max(1, n) - w.occurrence / max(1, w.occurrences))
                pairs.append((-(same_slot + overlap) + 0.001 * closeness, wi, k, i))
    pairs.sort()
    used_w: set[int] = set()
    used_m: set[int] = set()
    out = {}
    for _, wi, k, i in pairs:
        if wi in used_w or k in used_m:
            continue
        used_w.add(wi)
        used_m.add(k)
        out[i] = words[wi]
    return out


def context_overlap(left: Sequence[str], right: Sequence[str], new_left: Sequence[str],
                    new_right: Sequence[str]) -> float:
    """Share of the reviewed context words found again on the same side (as bags of words)."""
    total = len(left) + len(right)
    if not total:
        return 0.0
    same = sum((Counter(left) & Counter(new_left)).values()) + sum((Counter(right) & Counter(new_right)).values())
    return same / total
