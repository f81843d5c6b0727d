"""Segmentation as in the EXPRESS paper: long posts become windows around groups of masks.

A post of at most `max_tokens` tokens stays whole. Longer posts: masks whose token positions lie
within `group_tokens` of the group's first mask form a group; each group gives one window of
`half_window` tokens each side of its centre, clipped inwards to sentence boundaries (but never
so far that a mask of the group falls out). The tokenizer is pluggable; the default counts
tokens offline with a regex that approximates RoBERTa's word pieces.
"""
from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import regex

from schemas.config import SegmentConfig
from schemas.records import Disclosure

Span = tuple[int, int]


class Tokenizer(Protocol):
    name: str

    def spans(self, text: str) -> list[Span]:
        """Character spans of the tokens, in order."""


# ASCII letters -> "a", digits -> "0", what `\s` matches in ASCII -> " " (not \x1c-\x1f, as for
# the `regex` module), every other byte -> "." (a mark: one token)
_CLASSES = bytes(97 if chr(b).isalpha() and b < 128 else 48 if 48 <= b <= 57 else
                 32 if b in (9, 10, 11, 12, 13, 32) else 46 for b in range(256))


class RegexWordPieceTokenizer:
    """Offline approximation of a BPE tokenizer: words split into pieces of at most 6 letters,
    digits in groups of 3, each punctuation mark one token. No downloads."""

    name = "regex-wordpiece-v1"
    chars_per_token_min = 1  # tokens never overlap and are never empty: at most len(text) of them
    _TOKEN = regex.compile(r"\p{L}{1,6}|\p{N}{1,3}|[^\s\p{L}\p{N}]")

    def spans(self, text: str) -> list[Span]:
        return [m.span() for m in self._TOKEN.finditer(text)]

    def count(self, text: str) -> int:
        """len(spans(text)), at half the cost: most posts are only counted, never cut."""
        return len(self._TOKEN.findall(text))

    @staticmethod
    def at_most(text: str) -> int:
        """An upper bound of count(text) from character counts alone (a fraction of what count
        costs). Every non-ASCII character is taken as a mark (one token; it
        can only split a run of letters or digits, never join two), and a run of L letters as
        (L + 5) / 6 tokens (it is ceil(L / 6)), digits likewise in threes."""
        b = text.encode("ascii", "replace").translate(_CLASSES)
        letter_runs = b.count(b" a") + b.count(b"0a") + b.count(b".a") + b.startswith(b"a")
        digit_runs = b.count(b" 0") + b.count(b"a0") + b.count(b".0") + b.startswith(b"0")
        return (b.count(b"a") + 5 * letter_runs) // 6 + (b.count(b"0") + 2 * digit_runs) // 3 + b.count(b".")


class HFTokenizer:
    """A Hugging Face tokenizer already in the local cache (e.g. roberta-base); never downloads."""

    def __init__(self, name: str):
        from transformers import AutoTokenizer  # optional dependency

        self._tok = AutoTokenizer.from_pretrained(name, local_files_only=True)
        self.name = f"hf:{name}"

    def spans(self, text: str) -> list[Span]:
        enc = self._tok(text, return_offsets_mapping=True, add_special_tokens=False)
        return [tuple(s) for s in enc["offset_mapping"]]


TOKENIZERS: dict[str, Callable[[], Tokenizer]] = {"regex-wordpiece": RegexWordPieceTokenizer}


def get_tokenizer(name: str) -> Tokenizer:
    """`regex-wordpiece` (default) or `hf:<name>` for a locally cached Hugging Face tokenizer."""
    if name.startswith("hf:"):
        return HFTokenizer(name[3:])
    if name not in TOKENIZERS:
        raise ValueError(f"unknown tokenizer '{name}' (known: {sorted(TOKENIZERS)} or hf:<name>)")
    return TOKENIZERS[name]()


_SENTENCE_END = regex.compile(r"[.!?…]+[\"')\]]*(?=\s)|\n\s*\n")


def sentence_bounds(text: str) -> list[int]:
    """Character offsets where sentences start (0 included), after ., !, ? or a blank line."""
    starts = [0]
    for m in _SENTENCE_END.finditer(text):
        nxt = m.end()
        while nxt < len(text) and text[nxt].isspace():
            nxt += 1
        if nxt < len(text):
            starts.append(nxt)
    return sorted(set(starts))


@dataclass(frozen=True)
class Segment:
    """A window of a post: its text and the disclosures inside it, re-offset to the window."""

    start: int
    end: int
    text: str
    disclosures: list[Disclosure]


class Segmenter:
    def __init__(self, cfg: SegmentConfig | None = None, tokenizer: Tokenizer | None = None):
        self.cfg = cfg or SegmentConfig()
        self.tokenizer = tokenizer or get_tokenizer(self.cfg.tokenizer)

    def describe(self) -> dict[str, object]:
        c = self.cfg
        return {"tokenizer": self.tokenizer.name, "max_tokens": c.max_tokens,
                "group_tokens": c.group_tokens, "half_window": c.half_window}

    def segments(self, text: str, disclosures: list[Disclosure]) -> list[Segment]:
        """The post itself when short enough, else one window per group of masks."""
        if not disclosures or self._surely_short(text) or self._counted_short(text):
            return [Segment(0, len(text), text, list(disclosures))]
        spans = self.tokenizer.spans(text)
        if len(spans) <= self.cfg.max_tokens:
            return [Segment(0, len(text), text, list(disclosures))]
        starts = [s for s, _ in spans]
        ordered = sorted(disclosures, key=lambda d: d.start)
        positions = [max(0, bisect.bisect_right(starts, d.start) - 1) for d in ordered]
        groups: list[list[int]] = []
        for i, pos in enumerate(positions):
            if groups and pos - positions[groups[-1][0]] <= self.cfg.group_tokens:
                groups[-1].append(i)
            else:
                groups.append([i])
        bounds = sentence_bounds(text)
        out = []
        for g in groups:
            first, last = ordered[g[0]], ordered[g[-1]]
            centre = (positions[g[0]] + positions[g[-1]]) // 2
            lo_tok = max(0, centre - self.cfg.half_window)
            hi_tok = min(len(spans) - 1, centre + self.cfg.half_window)
            lo, hi = spans[lo_tok][0], spans[hi_tok][1]
            lo, hi = self._clip(lo, hi, first.start, last.end, bounds, len(text))
            while hi > last.end and text[hi - 1].isspace():
                hi -= 1
            inside = [d for d in ordered if lo <= d.start and d.end <= hi]
            moved = [Disclosure(d.start - lo, d.end - lo, d.surface, d.label, d.pattern, d.rule, d.negated,
                                d.acceptance)
                     for d in inside]
            out.append(Segment(lo, hi, text[lo:hi], moved))
        return out

    def _surely_short(self, text: str) -> bool:
        """A text of at most max_tokens characters has at most max_tokens tokens when every token
        covers a character: most posts then need no tokenizing at all."""
        return getattr(self.tokenizer, "chars_per_token_min", 0) >= 1 and len(text) <= self.cfg.max_tokens

    def _counted_short(self, text: str) -> bool:
        """Short by the tokenizer's cheap bound, else by its count (when it has them)."""
        at_most = getattr(self.tokenizer, "at_most", None)
        if at_most is not None and at_most(text) <= self.cfg.max_tokens:
            return True
        count = getattr(self.tokenizer, "count", None)
        return count is not None and count(text) <= self.cfg.max_tokens

    @staticmethod
    def _clip(lo: int, hi: int, first: int, last: int, bounds: list[int], n: int) -> Span:
        """Move the window's edges inwards to sentence boundaries, keeping [first, last] inside."""
        if lo > 0:
            i = bisect.bisect_left(bounds, lo)
            cand = bounds[i] if i < len(bounds) else n
            lo = cand if cand <= first else bounds[max(0, bisect.bisect_right(bounds, first) - 1)]
        if hi < n:
            i = bisect.bisect_right(bounds, hi) - 1
            cand = bounds[i] if i >= 0 else 0
            if cand < last:
                j = bisect.bisect_left(bounds, last)
                cand = bounds[j] if j < len(bounds) else n
            hi = cand
        return lo, hi
