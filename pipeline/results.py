"""Typed results of the build's steps; each is also the JSON its completion marker holds."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import cache
from typing import Any, TypeVar, get_type_hints

from pipeline.shards import Shard
from schemas.funnel import Funnel

R = TypeVar("R", bound="StepResult")

# How a marker stores the typed values of a result (everything else is plain JSON).
_ENCODE = {Funnel: Funnel.to_dict, Shard: Shard.to_dict}
_DECODE = {Funnel: Funnel.from_dict, Shard: Shard.from_dict}


@cache
def _codecs(cls: type) -> dict[str, tuple[type, bool]]:
    """The fields of `cls` holding a Funnel or Shard (or a list of them): name -> (type, is_list)."""
    out = {}
    for name, hint in get_type_hints(cls).items():
        for t in _ENCODE:
            if hint is t or hint == list[t]:
                out[name] = (t, hint is not t)
    return out


@dataclass
class StepResult:
    """What a step did to one unit, with its seconds; `skipped` when a marker said it was done
    before (the figures are then the earlier run's)."""

    seconds: float = field(default=0.0, kw_only=True)
    skipped: bool = field(default=False, kw_only=True)

    def funnels(self) -> dict[str, Funnel]:
        """The funnels the runner checks (read = kept + dropped + malformed), by label."""
        return {}

    def to_marker(self) -> dict[str, Any]:
        out = {}
        codecs = _codecs(type(self))
        for f in fields(self):
            if f.name == "skipped":
                continue
            value = getattr(self, f.name)
            if f.name in codecs:
                t, is_list = codecs[f.name]
                value = [_ENCODE[t](v) for v in value] if is_list else _ENCODE[t](value)
            out[f.name] = value
        return out

    @classmethod
    def from_marker(cls: type[R], data: dict[str, Any], skipped: bool = True) -> R:
        codecs = _codecs(cls)
        values = {}
        for f in fields(cls):
            if f.name == "skipped" or f.name not in data:
                continue
            value = data[f.name]
            if f.name in codecs:
                t, is_list = codecs[f.name]
                value = [_DECODE[t](v) for v in value] if is_list else _DECODE[t](value)
            values[f.name] = value
        return cls(**values, skipped=skipped)


@dataclass
class ShardResult(StepResult):
    """What a step did to one shard: its funnel."""

    shard: str
    funnel: Funnel

    def funnels(self) -> dict[str, Funnel]:
        return {self.shard: self.funnel}


@dataclass
class FilterResult(ShardResult):
    """Parse + comment join + stateless filters of one shard."""

    comments_joined: int = 0
    nsfw_files: int = 0  # how many earlier shards' NSFW-id files the join read
    unjoined_comments: int = 0  # comments left SFW that other shards' ids could still flag


@dataclass
class DedupeResult(ShardResult):
    """Exact and near duplicates of one shard, against every earlier post of the run."""

    dropped_rows: list[int] = field(default_factory=list)  # rows of posts.parquet dropped here


@dataclass
class ExtractResult(ShardResult):
    """Disclosures, masks and examples of one shard's kept posts."""

    unmapped: dict[str, Any] = field(default_factory=dict)
    hits: dict[str, int] = field(default_factory=dict)  # pattern hits found = accepted + not_accepted


@dataclass
class PrescanResult(StepResult):
    """The gate's PII scan of one shard's examples (0 texts when the recipe needs none)."""

    shard: str
    texts: int = 0


@dataclass
class SplitResult(StepResult):
    """One input cut into shards of `shard_lines` raw lines (no parsing)."""

    input: str
    stem: str
    sha256: str
    lines: int
    shard_lines: int
    shards: list[Shard]


@dataclass
class AssembleResult(StepResult):
    """A run's tables joined from its finished shards, with the run-level funnels."""

    ingest: Funnel
    extract: Funnel
    inputs: list[dict[str, Any]]  # the manifest's input entries (path, sha256)
    shard_list: list[Shard]
    examples: str
    disclosures: str
    comments_joined: int = 0
    unmapped: dict[str, Any] = field(default_factory=dict)  # masked words the vocabulary does not map

    @property
    def shards(self) -> int:
        return len(self.shard_list)

    def funnels(self) -> dict[str, Funnel]:
        return {"ingest (all shards)": self.ingest, "extract (all shards)": self.extract}


@dataclass
class Published:
    """The release a run published (or had published before: `already_published`)."""

    dataset: str
    version: str
    path: str
    manifest: str
    already_published: bool = False

    @property
    def release_id(self) -> str:
        return f"{self.dataset}/{self.version}"

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}
