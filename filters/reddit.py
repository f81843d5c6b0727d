"""The Reddit filters: deleted/removed, NSFW, bots, distinguished and stickied posts, crossposts,
length and exact duplicates.

Each filter is a small step returning a reason code (or None to keep); filters/chain.py builds
the chain a recipe asks for, in its order.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import ClassVar

from schemas.config import FilterConfig
from schemas.records import RawPost

from filters.lists import load_list, resolve_list


class DeletedFilter:
    """Deleted or removed posts: the text is gone or the author withdrew it (Reddit's terms)."""

    name = "deleted"

    def check(self, post: RawPost) -> str | None:
        body = post.selftext.strip()
        if body == "[removed]" or post.removed_by_category or post.title.strip().lower() == "[removed by reddit]":
            return "removed"
        if body == "[deleted]" or post.title.strip().lower() == "[deleted by user]":
            return "deleted"
        if post.author == "[deleted]":
            return "deleted" if not body else "deleted_author"
        return None


@dataclass
class NsfwFilter:
    """`over_18` (own or joined from the submission) or a subreddit on the blocklist."""

    subreddits: frozenset[str] = frozenset()
    name: str = "nsfw"

    def check(self, post: RawPost) -> str | None:
        if post.over_18:
            return "nsfw"
        if post.subreddit.lower() in self.subreddits:
            return "nsfw_subreddit"
        return None


@dataclass
class BotFilter:
    """Bot boilerplate: posts of listed accounts (case-insensitive)."""

    authors: frozenset[str]
    name: str = "bot"

    def __post_init__(self) -> None:
        self.authors = frozenset(a.lower() for a in self.authors)

    def check(self, post: RawPost) -> str | None:
        return "bot" if post.author.lower() in self.authors else None


@dataclass
class DistinguishedFilter:
    """Posts a moderator or admin wrote in that role (`distinguished`), and pinned posts (`stickied`):
    announcements and rules, written by people, so counted apart from bots."""

    drop_distinguished: bool = True
    drop_stickied: bool = True
    name: str = "distinguished"

    def check(self, post: RawPost) -> str | None:
        if self.drop_distinguished and post.distinguished in ("moderator", "admin"):
            return "distinguished"
        if self.drop_stickied and post.stickied:
            return "stickied"
        return None


class CrosspostFilter:
    """Crossposts repeat another post's text; the original is kept where it is read."""

    name = "crosspost"

    def check(self, post: RawPost) -> str | None:
        return "crosspost" if post.crosspost_parent else None


@dataclass
class LengthFilter:
    """Too few or too many words (`str.split()` words). This runs on every post of a dump, so the
    words are counted only as far as a bound needs: the first min_words + 1 of them (splitting a whole
    post costs much more), and all of them only for a text long enough to
    hold more than max_words (n words take at least 2n - 1 characters)."""

    min_words: int = 0
    max_words: int = 0
    name: str = "length"

    def check(self, post: RawPost) -> str | None:
        text = post.text
        if self.min_words and len(text.split(None, self.min_words)) < self.min_words:
            return "too_short"  # split(None, k) gives min(words, k + 1) parts
        if self.max_words and (len(text) + 1) // 2 > self.max_words and len(text.split()) > self.max_words:
            return "too_long"
        return None


def normalised_hash(text: str) -> bytes:
    """16-byte hash of the text with case and white space folded."""
    # str.split() splits on exactly the characters `\s` matches: same as sub(r"\s+", " ").strip(), faster
    return hashlib.blake2b(" ".join(text.lower().split()).encode(), digest_size=16).digest()


@dataclass
class ExactDuplicateFilter:
    """Drops a post whose normalised text (case and white space folded) was seen before.

    Memory: 16 bytes of hash (plus the set's overhead) per kept post.
    """

    stateful: ClassVar[bool] = True
    seen: set[bytes] = field(default_factory=set)
    name: str = "duplicate"

    def key(self, post: RawPost) -> bytes:
        """What two duplicates share; computed apart from `check` so shards can hash in parallel."""
        return normalised_hash(post.text)

    def check(self, post: RawPost) -> str | None:
        key = self.key(post)
        if key in self.seen:
            return "duplicate"
        self.seen.add(key)
        return None


def filter_data_versions(cfg: FilterConfig) -> dict[str, str]:
    """Versions of the list files a recipe uses, for the manifest."""
    out = {}
    for kind, setting in (("bot_authors", cfg.bot_authors_file), ("nsfw_subreddits", cfg.nsfw_subreddits_file)):
        path = resolve_list(setting, kind)
        if path is not None:
            out[kind] = load_list(path).version
    return out
