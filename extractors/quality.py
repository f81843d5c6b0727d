"""Exact-span precision and recall of extracted disclosures against gold spans (EXPRESS dev data)."""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from schemas.records import Disclosure

from extractors.reference import EXTENDED_TAG


@dataclass(frozen=True)
class SpanScore:
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    def __str__(self) -> str:
        return f"P={self.precision:.4f} R={self.recall:.4f} (tp {self.tp}, fp {self.fp}, fn {self.fn})"


def score_spans(rows: Sequence[dict[str, Any]], found: Iterable[list[Disclosure]],
                include_negated: bool) -> SpanScore:
    """Gold spans are `rows[k]["gold_spans"]` ({start, end}); negated finds count only if asked.

    EXPRESS gold keeps negated disclosures ("I'm not scared" is masked), so span detection is
    scored with include_negated=True; False scores the default labels (negated ones dropped).
    """
    tp = fp = fn = 0
    for row, ds in zip(rows, found):
        gold = {(s["start"], s["end"]) for s in row["gold_spans"]}
        pred = {(d.start, d.end) for d in ds if include_negated or not d.negated}
        tp += len(gold & pred)
        fp += len(pred - gold)
        fn += len(gold - pred)
    return SpanScore(tp, fp, fn)


def score_reachable(rows: Sequence[dict[str, Any]], found: Iterable[list[Disclosure]]) -> SpanScore:
    """Spans scored only on finds of the reference trigger forms (rule without EXTENDED_TAG)."""
    tp = fp = fn = 0
    for row, ds in zip(rows, found):
        gold = {(s["start"], s["end"]) for s in row["gold_spans"]}
        pred = {(d.start, d.end) for d in ds if not d.rule.endswith(EXTENDED_TAG)}
        tp += len(gold & pred)
        fp += len(pred - gold)
        fn += len(gold - pred)
    return SpanScore(tp, fp, fn)


def fold_of(post_id: str) -> str:
    """A stable two-way split of dev rows by post (A or B), to check that a change generalises."""
    return "AB"[hashlib.sha256(str(post_id).encode("utf-8")).digest()[0] % 2]


def score_folds(rows: Sequence[dict[str, Any]], found: Sequence[list[Disclosure]],
                include_negated: bool = True) -> dict[str, SpanScore]:
    """Span scores of each fold of `fold_of` (segments of one post stay in one fold)."""
    out = {}
    for fold in "AB":
        keep = [k for k, r in enumerate(rows) if fold_of(r["post_id"]) == fold]
        out[fold] = score_spans([rows[k] for k in keep], [found[k] for k in keep], include_negated)
    return out
