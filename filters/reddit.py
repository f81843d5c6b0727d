"""The Reddit filters: deleted/removed, NSFW, bots, length bounds and exact duplicates."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from schemas.config import FilterConfig
from schemas.records import RawPost

from filters.base import Filter

_DELETED = {"[deleted]", "[removed]"}
_SPACE = re.compile(r"\s+")


class DeletedFilter:
    name = "deleted"

    def check(self, post: RawPost) -> str | None:
        body = post.selftext.strip()
        if body == "[removed]" or post.removed_by_category:
            return "removed"
        if body == "[deleted]" or post.author == "[deleted]" and not body:
            return "deleted"
        return None


class NsfwFilter:
    name = "nsfw"

    def check(self, post: RawPost) -> str | None:
        return "nsfw" if post.over_18 else None


@dataclass
class BotFilter:
    authors: frozenset[str]
    name: str = "bot"

    def check(self, post: RawPost) -> str | None:
        if post.author in self.authors:
            return "bot"
        if post.distinguished == "moderator" and post.stickied:
            return "bot"
        return None


@dataclass
class LengthFilter:
    min_words: int = 0
    max_words: int = 0
    name: str = "length"

    def check(self, post: RawPost) -> str | None:
        n = len(post.text.split())
        if n < self.min_words:
            return "too_short"
        if self.max_words and n > self.max_words:
            return "too_long"
        return None


@dataclass
class ExactDuplicateFilter:
    """Drops a post whose normalised text (case and white space folded) was seen before."""

    stateful = True  # decisions depend on earlier posts: sharded builds run it sequentially
    seen: set[bytes] = field(default_factory=set)
    name: str = "duplicate"

    def check(self, post: RawPost) -> str | None:
        key = hashlib.blake2b(_SPACE.sub(" ", post.text.lower()).strip().encode(), digest_size=16).digest()
        if key in self.seen:
            return "duplicate"
        self.seen.add(key)
        return None


def filters_from_config(cfg: FilterConfig) -> list[Filter]:
    """The filter chain a recipe asks for, cheapest first; duplicates last so drops are not hashed."""
    chain: list[Filter] = []
    if cfg.drop_deleted:
        chain.append(DeletedFilter())
    if cfg.drop_nsfw:
        chain.append(NsfwFilter())
    chain.append(BotFilter(frozenset(cfg.bot_authors)))
    if cfg.min_words or cfg.max_words:
        chain.append(LengthFilter(cfg.min_words, cfg.max_words))
    if cfg.drop_duplicates:
        chain.append(ExactDuplicateFilter())
    return chain
