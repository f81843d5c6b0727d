"""Join comments to their submission (`link_id`) so submission flags (NSFW) apply to comments.

Stream-friendly: submission files are read first (`order_inputs`), and only the ids of flagged
(NSFW) submissions are kept, as base-36 integers in a set: memory is about 70 bytes per flagged
submission, independent of comment volume.
Comments whose submission is not among the inputs are left as they are.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from schemas.records import Malformed, RawPost


def _key(post_id: str) -> int | str:
    try:
        return int(post_id, 36)
    except ValueError:
        return post_id


def is_comment_input(path: str) -> bool:
    """A comment dump (`RC_*`): read after every submission dump."""
    return Path(path).name.upper().startswith("RC_")


def order_inputs(paths: list[str]) -> list[str]:
    """Submission dumps before comment dumps (`RC_*`), otherwise in the given order."""
    return sorted(paths, key=is_comment_input)


def flagged_id(post: RawPost) -> str | None:
    """The id of a submission whose flag (NSFW) its comments inherit, else None."""
    return post.id if post.kind == "submission" and post.over_18 else None


@dataclass
class SubmissionFlags:
    """Ids of NSFW submissions seen so far; applied to comments that point at them."""

    nsfw: set[int | str] = field(default_factory=set)
    joined: int = 0

    def note(self, post: RawPost) -> None:
        if flagged_id(post) is not None:
            self.nsfw.add(_key(post.id))

    def add_ids(self, ids: Iterable[str]) -> None:
        """Ids of NSFW submissions noted elsewhere (e.g. by earlier shards of a sharded build)."""
        self.nsfw.update(_key(i) for i in ids)

    def apply(self, post: RawPost) -> RawPost:
        if post.kind == "comment" and not post.over_18 and post.link_id:
            parent = post.link_id.removeprefix("t3_")
            if _key(parent) in self.nsfw:
                post.over_18 = True
                self.joined += 1
        return post


def join_comments(records: Iterable[RawPost | Malformed], flags: SubmissionFlags) -> Iterator[RawPost | Malformed]:
    """Pass records through, noting submission flags and applying them to comments."""
    for rec in records:
        if isinstance(rec, RawPost):
            flags.note(rec)
            rec = flags.apply(rec)
        yield rec
