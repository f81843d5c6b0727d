"""Record types and the Arrow schemas of the three tables the pipeline writes.

Raw posts are stored once; disclosures are derived from them (keyed by post id) and examples
are the masked texts a model is scored on. Keeping them separate lets a new vocabulary or rule
version re-derive labels without re-reading Reddit.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
from types import UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints

import pyarrow as pa

MASK = "<mask>"
TAKEDOWN = "takedown"  # the drop reason of a taken-down post (docs/takedowns.md): quarantined without its text


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


# Field names, read once: `dataclasses.asdict` deep-copies every value and costs much more per row,
# which shows at millions of posts.
_DISCLOSURE_FIELDS = tuple(f.name for f in fields(Disclosure))
_EXAMPLE_FIELDS = tuple(f.name for f in fields(Example))


@dataclass(slots=True)
class PostDisclosures:
    """Every disclosure found in one post (before masking choices): the run's disclosures table."""

    post_id: str
    disclosures: list[Disclosure] = field(default_factory=list)


@dataclass(slots=True)
class QuarantineRow:
    """A record that left a step: dropped with a reason, or malformed. `raw` is left out where the
    text is stored elsewhere (quarantine_values)."""

    stage: str
    reason: str
    post_id: str | None
    source_file: str | None
    source_line: int | None
    raw: str | None


_ARROW = {str: pa.string(), int: pa.int64(), bool: pa.bool_(), float: pa.float64()}


def arrow_type(hint: Any) -> pa.DataType:
    """The Arrow type of a record field's type hint: scalars, `X | None` (every column is nullable),
    lists, and records (structs)."""
    args = [a for a in get_args(hint) if a is not type(None)]
    if get_origin(hint) in (Union, UnionType) and len(args) == 1:
        return arrow_type(args[0])
    if get_origin(hint) is list:
        return pa.list_(arrow_type(args[0]))
    if hint in _ARROW:
        return _ARROW[hint]
    if is_dataclass(hint):
        return pa.struct(list(arrow_schema(hint)))
    raise TypeError(f"no Arrow type for {hint!r}")


def arrow_schema(cls: type, derived: dict[str, type] | None = None) -> pa.Schema:
    """The table schema of a record type: its fields in order, then the `derived` columns a row adds
    (e.g. Example.n_masks). The one place a record's columns are declared is its dataclass."""
    hints = get_type_hints(cls)
    columns = [(f.name, hints[f.name]) for f in fields(cls)] + list((derived or {}).items())
    return pa.schema([pa.field(name, arrow_type(hint)) for name, hint in columns])


RAW_POSTS = arrow_schema(RawPost)
DISCLOSURES = arrow_schema(PostDisclosures)
EXAMPLES = arrow_schema(Example, derived={"n_masks": int})
QUARANTINE = arrow_schema(QuarantineRow)


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
    its text cost a third of a build). A taken-down post keeps neither its id nor its text."""
    if isinstance(rec, Malformed):
        return stage, rec.reason, None, rec.source_file, rec.source_line, rec.raw
    if reason == TAKEDOWN:
        return stage, reason, None, rec.source_file, rec.source_line, None
    return stage, reason, rec.id, rec.source_file, rec.source_line, rec.text if with_text else None
