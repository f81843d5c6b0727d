"""The span algebra of scrubbing: overlapping findings settled into one span each, a later round's
spans joined to an earlier round's, and offsets in a scrubbed text mapped back to the input.

Each works in time that grows with the number of spans times the few that can overlap one (found
by their starts, with the longest span so far bounding how far back an overlap can begin), not
with the square of the spans: a text of a few megabytes can hold tens of thousands of findings.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

F = TypeVar("F")  # a frozen dataclass with `start` and `end` (privacy.scrubber.Found)

class _ByStart:
    """Spans kept in order of their starts, with the overlapping ones found from there."""

    def __init__(self) -> None:
        self.starts: list[tuple[int, int]] = []  # (start, id)
        self.items: dict[int, Any] = {}
        self.longest = 0

    def add(self, key: int, item: Any) -> None:
        insort(self.starts, (item.start, key))
        self.items[key] = item
        self.longest = max(self.longest, item.end - item.start)

    def remove(self, key: int) -> None:
        item = self.items.pop(key)
        del self.starts[bisect_left(self.starts, (item.start, key))]

    def overlapping(self, start: int, end: int) -> list[int]:
        """Keys of the spans overlapping [start, end), in the order they were first added."""
        lo = bisect_left(self.starts, (start - self.longest, -1))
        hi = bisect_left(self.starts, (end, -1))
        return sorted(k for _, k in self.starts[lo:hi] if self.items[k].end > start)

    def in_order(self) -> list[Any]:
        return [self.items[k] for _, k in self.starts]


def settle(results: Sequence[Any], make: Callable[[Any, int, int], Any]) -> list[Any]:
    """Non-overlapping spans: the longer span wins an overlap, then the higher score, then a
    structured kind over a name; the winner (the first one kept, of those it overlaps) grows to
    cover what it overlapped, so no part of a losing span stays in the text. `make(result, start,
    end)` makes the kept copy of a result; the spans come back in text order."""
    ranked = sorted(results, key=lambda r: (-(r.end - r.start), -r.score, r.entity_type == "PERSON", r.start))
    kept = _ByStart()
    for key, r in enumerate(ranked):
        hit = kept.overlapping(r.start, r.end)
        if not hit:
            kept.add(key, make(r, r.start, r.end))
            continue
        start = min(r.start, *(kept.items[k].start for k in hit))
        end = max(r.end, *(kept.items[k].end for k in hit))
        winner = kept.items[hit[0]]
        for k in hit:
            kept.remove(k)
        winner.start, winner.end = start, end
        kept.add(hit[0], winner)
    return kept.in_order()


def union(first: list[F], more: list[F]) -> list[F]:
    """Spans of both lists, in order; an overlap keeps the earlier list's span (the first listed
    of those it overlaps), grown over both."""
    out = _ByStart()
    for key, f in enumerate(first):
        out.add(key, f)
    for key, s in enumerate(more, start=len(first)):
        hit = out.overlapping(s.start, s.end)
        if hit:
            f = out.items[hit[0]]
            out.remove(hit[0])
            out.add(hit[0], replace(f, start=min(f.start, s.start), end=max(f.end, s.end)))
        else:
            out.add(key, s)
    return sorted(out.in_order(), key=lambda f: f.start)


def to_input(spans: list[F], replaced: list[F], placeholder: Callable[[F], str]) -> list[F]:
    """Spans of a scrubbed text as offsets into the text before scrubbing (`replaced`: what was
    replaced there, in order of their starts; `placeholder(f)`: what replaced f)."""
    if any(b.start < a.end for a, b in zip(replaced, replaced[1:])):  # grown spans overlap: one at a time
        return [_to_input_one(s, replaced, placeholder) for s in spans]
    ends, shifts, shift = [], [0], 0  # where each placeholder ends in the scrubbed text; shifts before it
    for r in replaced:
        ends.append(r.start - shift + len(placeholder(r)))
        shift += (r.end - r.start) - len(placeholder(r))
        shifts.append(shift)
    return [replace(s, start=s.start + shifts[bisect_right(ends, s.start)], end=s.end + shifts[bisect_right(ends, s.end)])
            for s in spans]


def _to_input_one(span: F, replaced: list[F], placeholder: Callable[[F], str]) -> F:
    shift_start = shift_end = 0
    for r in replaced:
        delta = (r.end - r.start) - len(placeholder(r))
        at = r.start - shift_start  # where r's placeholder starts in the scrubbed text
        if at + len(placeholder(r)) <= span.start:
            shift_start += delta
        if at + len(placeholder(r)) <= span.end:
            shift_end += delta
    return replace(span, start=span.start + shift_start, end=span.end + shift_end)
