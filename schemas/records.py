"""Record types and the Arrow schemas of the three tables the pipeline writes.

Raw posts are stored once; disclosures are derived from them (keyed by post id) and examples
are the masked texts a model is scored on. Keeping them separate lets a new vocabulary or rule
version re-derive labels without re-reading Reddit.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import pyarrow as pa

MASK = "<mask>"


@dataclass(slots=True)
class RawPost:
    """One Reddit submission (or comment) as the readers yield it, before filtering."""

    id: str
    text: str
    subreddit: str = ""
    author: str = ""
    created_utc: int = 0
    title: str = ""
    selftext: str = ""
    over_18: bool = False
    score: int = 0
    distinguished: str = ""
    stickied: bool = False
    removed_by_category: str = ""
    kind: str = "submission"
    link_id: str = ""
    source: str = ""
    source_file: str = ""
    source_line: int = 0
    retrieved_on: int = 0
    crosspost_parent: str = ""  # fullname of the original post when this one is a crosspost


@dataclass(slots=True)
class Disclosure:
    """A first-person emotion disclosure: `text[start:end] == surface`."""

    start: int
    end: int
    surface: str
    label: str
    pattern: str
    rule: str = ""
    negated: bool = False
    acceptance: float | None = None  # the acceptance model's probability; None when it is off

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _DISCLOSURE_FIELDS}


@dataclass(slots=True)
class Example:
    """A masked text with its labels in mask order: what a model is scored on."""

    post_id: str
    segment_index: int
    subreddit: str
    created_utc: int
    text: str
    masked_text: str
    surfaces: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)

    @property
    def n_masks(self) -> int:
        return len(self.labels)

    def to_row(self) -> dict[str, Any]:
        row = {name: getattr(self, name) for name in _EXAMPLE_FIELDS}
        for name in ("surfaces", "labels", "patterns"):
            row[name] = list(row[name])  # a copy, as the row may outlive later edits of the example
        row["n_masks"] = self.n_masks
        return row


# Field names, read once: `dataclasses.asdict` deep-copies every value and costs ~10x more per row,
# which shows at millions of posts.
_DISCLOSURE_FIELDS = tuple(f.name for f in fields(Disclosure))
_EXAMPLE_FIELDS = tuple(f.name for f in fields(Example))


RAW_POSTS = pa.schema(
    [
        ("id", pa.string()),
        ("text", pa.string()),
        ("subreddit", pa.string()),
        ("author", pa.string()),
        ("created_utc", pa.int64()),
        ("title", pa.string()),
        ("selftext", pa.string()),
        ("over_18", pa.bool_()),
        ("score", pa.int64()),
        ("distinguished", pa.string()),
        ("stickied", pa.bool_()),
        ("removed_by_category", pa.string()),
        ("kind", pa.string()),
        ("link_id", pa.string()),
        ("source", pa.string()),
        ("source_file", pa.string()),
        ("source_line", pa.int64()),
        ("retrieved_on", pa.int64()),
        ("crosspost_parent", pa.string()),
    ]
)

DISCLOSURE_STRUCT = pa.struct(
    [
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("surface", pa.string()),
        ("label", pa.string()),
        ("pattern", pa.string()),
        ("rule", pa.string()),
        ("negated", pa.bool_()),
        ("acceptance", pa.float64()),
    ]
)

DISCLOSURES = pa.schema(
    [
        ("post_id", pa.string()),
        ("disclosures", pa.list_(DISCLOSURE_STRUCT)),
    ]
)

EXAMPLES = pa.schema(
    [
        ("post_id", pa.string()),
        ("segment_index", pa.int64()),
        ("subreddit", pa.string()),
        ("created_utc", pa.int64()),
        ("text", pa.string()),
        ("masked_text", pa.string()),
        ("surfaces", pa.list_(pa.string())),
        ("labels", pa.list_(pa.string())),
        ("patterns", pa.list_(pa.string())),
        ("n_masks", pa.int64()),
    ]
)

# Dropped/malformed records keep why they left, and where they came from.
QUARANTINE = pa.schema(
    [
        ("stage", pa.string()),
        ("reason", pa.string()),
        ("post_id", pa.string()),
        ("source_file", pa.string()),
        ("source_line", pa.int64()),
        ("raw", pa.string()),
    ]
)


@dataclass(slots=True)
class Malformed:
    """An input line that could not be read as a post: kept for the quarantine, never dropped silently."""

    source_file: str
    source_line: int
    raw: str
    reason: str


def quarantine_values(stage: str, rec: RawPost | Malformed, reason: str, with_text: bool = True) -> tuple[Any, ...]:
    """A QUARANTINE row as a tuple in its column order (stage, reason, post_id, source_file,
    source_line, raw), for `ParquetSink.write_values`. A post may leave its text out where it is
    stored elsewhere: dropped after ingest (the run's posts.parquet holds it, keyed by id), or
    dropped by the disclosure prefilter (most of a dump: its file and line point at it, and writing
    its text cost a third of a build)."""
    if isinstance(rec, Malformed):
        return stage, rec.reason, None, rec.source_file, rec.source_line, rec.raw
    return stage, reason, rec.id, rec.source_file, rec.source_line, rec.text if with_text else None
