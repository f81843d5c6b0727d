"""Validate a vocabulary file against the lexicon and the decomposition (`express vocab check`).

Rules: every lexicon string has exactly one row and no row is outside the lexicon; a mapped row
has a label and an excluded row has none but has a reason; a label is itself a row of kind `base`
that maps to itself (so stems, typos and variants are never emitted as labels); every label has
a vector in the decomposition.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from schemas.lexicon import Decomposition, default_decomposition, lexicon_terms
from schemas.vocabulary import Entry, normalize, read_entries


@dataclass(frozen=True, slots=True)
class Problem:
    """One offending row (line 0 when the problem is a lexicon string with no row)."""

    line: int
    surface: str
    message: str

    def format(self, file: str | Path) -> str:
        return f"{file}:{self.line}: {self.surface!r}: {self.message}"


def check_entries(entries: list[Entry], lexicon: frozenset[str], decomposition: Decomposition) -> list[Problem]:
    """Every rule violation in `entries`, in file order (missing lexicon strings last)."""
    problems: list[Problem] = []
    seen = Counter(e.surface for e in entries)
    rows = {e.surface: e for e in entries}
    terms = {normalize(t) for t in lexicon}
    for e in entries:
        if seen[e.surface] > 1:
            problems.append(Problem(e.line, e.surface, f"appears {seen[e.surface]} times; each string needs exactly one row"))
        if e.surface not in terms:
            problems.append(Problem(e.line, e.surface, "not a lexicon string"))
        if e.excluded:
            if e.label:
                problems.append(Problem(e.line, e.surface, "excluded rows must leave the label empty"))
            if not e.reason:
                problems.append(Problem(e.line, e.surface, "excluded without a reason"))
            continue
        if not e.label:
            problems.append(Problem(e.line, e.surface, "no label (exclude it with a reason instead)"))
            continue
        if e.kind == "base" and e.label != e.surface:
            problems.append(Problem(e.line, e.surface, f"kind 'base' but label is {e.label!r}"))
        if e.label == e.surface and e.kind != "base":
            problems.append(Problem(e.line, e.surface, f"a {e.kind} cannot be a canonical label"))
        target = rows.get(e.label)
        if target is None:
            problems.append(Problem(e.line, e.surface, f"label {e.label!r} has no row of its own"))
        elif target.excluded or target.label != target.surface:
            problems.append(Problem(e.line, e.surface, f"label {e.label!r} is not a canonical label "
                                                       f"(its row is {target.kind}, maps to {target.label!r})"))
        if e.label == e.surface and e.label not in decomposition:
            problems.append(Problem(e.line, e.surface, "label has no vector in the decomposition"))
    for term in sorted(terms - rows.keys()):
        problems.append(Problem(0, term, "lexicon string has no row"))
    return problems


def check_file(path: str | Path, lexicon: frozenset[str] | None = None,
               decomposition: Decomposition | None = None) -> list[Problem]:
    """Read and check a vocabulary file; an unreadable row raises VocabularyError (file:line)."""
    return check_entries(read_entries(path), lexicon if lexicon is not None else lexicon_terms(),
                         decomposition or default_decomposition())
