"""Quote lines: a Markdown line that starts with `>` (after up to three spaces) usually quotes
someone else, so a disclosure inside it may not be the author's. `[extract] quote_lines` says
whether such finds are masked like any other ("mask") or left in the text unmasked ("skip"); the
default and what each does to precision and recall on the EXPRESS dev folds: docs/extraction.md.
"""
from __future__ import annotations

import re
from bisect import bisect_right

MASK_QUOTES, SKIP_QUOTES = "mask", "skip"
QUOTE_LINES = (MASK_QUOTES, SKIP_QUOTES)
QUOTED = "quoted"  # the rule suffix `explain` shows for a skipped find
_QUOTE_LINE = re.compile(r"^[ \t]{0,3}>.*$", re.MULTILINE)


class QuoteLines:
    """The quote lines of one text, for membership tests of a character offset."""

    def __init__(self, text: str):
        spans = [m.span() for m in _QUOTE_LINE.finditer(text)] if ">" in text else []
        self._starts = [a for a, _ in spans]
        self._ends = [b for _, b in spans]

    def holds(self, pos: int) -> bool:
        k = bisect_right(self._starts, pos) - 1
        return k >= 0 and pos < self._ends[k]
