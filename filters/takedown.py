"""The takedown filter: counts, first in the chain, the lines a build took out at read because the
takedown ledger names their post, its author or its text (pipeline/split.py writes each such line as
a tombstone without a word of it, which the filter step reads as a post without an id). Nothing else
is matched here: the ledger's one matcher ran where the line was read."""
from __future__ import annotations

from dataclasses import dataclass

from schemas.records import TAKEDOWN, RawPost


@dataclass
class TakedownFilter:
    name: str = TAKEDOWN

    def check(self, post: RawPost) -> str | None:
        return TAKEDOWN if not post.id else None
