"""The takedown filter: a post the takedown ledger names, or any post of an author it names, is
dropped at read with the reason `takedown`, before any other filter could quarantine its text."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from common.reddit_ids import post_key
from schemas.records import TAKEDOWN, RawPost


@dataclass
class TakedownFilter:
    """`posts`: ids as matched (post_key); `author_taken_down`: whether an author's name is taken
    down (the ledger's keyed hash, computed by the caller), or None when no author is."""

    posts: frozenset[str]
    author_taken_down: Callable[[str], bool] | None = None
    name: str = TAKEDOWN

    def check(self, post: RawPost) -> str | None:
        if post_key(post.id) in self.posts:
            return TAKEDOWN
        if self.author_taken_down is not None and self.author_taken_down(post.author):
            return TAKEDOWN
        return None
