"""Keep/drop steps: each filter returns a reason code to drop a post, or None to keep it."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol

from schemas.funnel import DropSink, Funnel
from schemas.records import Malformed, RawPost


class Filter(Protocol):
    name: str

    def check(self, post: RawPost) -> str | None:
        """The reason to drop `post`, or None to keep it."""


def run_filters(
    records: Iterable[RawPost | Malformed],
    filters: list[Filter],
    funnel: Funnel,
    on_drop: DropSink | None = None,
) -> Iterator[RawPost]:
    """Yield posts every filter keeps; count (and hand to `on_drop`) everything else.

    The first filter that objects decides the reason, so each record is counted exactly once.
    """
    for rec in records:
        funnel.read += 1
        if isinstance(rec, Malformed):
            funnel.malformed += 1
            if on_drop:
                on_drop(rec, "malformed")
            continue
        reason = None
        for f in filters:  # a plain loop: a generator per record costs more than most checks
            if (reason := f.check(rec)) is not None:
                break
        if reason is None:
            funnel.kept += 1
            yield rec
        else:
            funnel.drop(reason)
            if on_drop:
                on_drop(rec, reason)
