"""Typed results of the build's steps; each is also the JSON its completion marker holds."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from schemas.funnel import Funnel

R = TypeVar("R", bound="StepResult")


@dataclass
class StepResult:
    """What one step did to one shard: its funnel and seconds; `skipped` when a marker said it was
    done before (the counts are then the earlier run's)."""

    shard: str
    funnel: Funnel
    seconds: float = 0.0
    skipped: bool = False

    def to_marker(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "skipped"}
        out["funnel"] = self.funnel.to_dict()
        return out

    @classmethod
    def from_marker(cls: type[R], data: dict[str, Any], skipped: bool = True) -> R:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known and k != "skipped"}
        values["funnel"] = Funnel.from_dict(data["funnel"])
        return cls(**values, skipped=skipped)


@dataclass
class FilterResult(StepResult):
    """Parse + comment join + stateless filters of one shard."""

    comments_joined: int = 0
    nsfw_files: int = 0  # how many earlier shards' NSFW-id files the join read
    unjoined_comments: int = 0  # comments left SFW that other shards' ids could still flag


@dataclass
class DedupeResult(StepResult):
    """Exact and near duplicates of one shard, against every earlier post of the run."""

    dropped_rows: list[int] = field(default_factory=list)  # rows of posts.parquet dropped here


@dataclass
class ExtractResult(StepResult):
    """Disclosures, masks and examples of one shard's kept posts."""

    unmapped: dict[str, Any] = field(default_factory=dict)
    hits: dict[str, int] = field(default_factory=dict)  # pattern hits found = accepted + not_accepted


@dataclass
class SplitResult:
    """One input cut into shards of `shard_lines` raw lines (no parsing)."""

    input: str
    stem: str
    sha256: str
    lines: int
    shard_lines: int
    shards: list[dict[str, Any]]
    seconds: float = 0.0
    skipped: bool = False

    def to_marker(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "skipped"}

    @classmethod
    def from_marker(cls, data: dict[str, Any], skipped: bool = True) -> "SplitResult":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known and k != "skipped"}, skipped=skipped)


@dataclass
class AssembleResult:
    """A run's tables joined from its finished shards, with the run-level funnels."""

    ingest: Funnel
    extract: Funnel
    inputs: list[dict[str, Any]]  # the manifest's input entries (path, sha256)
    shard_list: list[dict[str, Any]]
    examples: str
    disclosures: str
    comments_joined: int = 0
    seconds: float = 0.0
    unmapped: dict[str, Any] = field(default_factory=dict)  # masked words the vocabulary does not map
    skipped: bool = False

    @property
    def shards(self) -> int:
        return len(self.shard_list)

    def to_marker(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "skipped"}
        return {**out, "ingest": self.ingest.to_dict(), "extract": self.extract.to_dict()}

    @classmethod
    def from_marker(cls, data: dict[str, Any], skipped: bool = True) -> "AssembleResult":
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known and k != "skipped"}
        values.update(ingest=Funnel.from_dict(data["ingest"]), extract=Funnel.from_dict(data["extract"]))
        return cls(**values, skipped=skipped)


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
