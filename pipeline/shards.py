"""Shards of a run: a shard is a contiguous range of raw lines of one input file, stored under
`<run>/shards/<input-stem>-<k:05d>/` with the files its steps write (pipeline/split.py cuts them).
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import stopping
from schemas.records import Malformed, RawPost
from sources.dumps import iter_lines, parse_line
from warehouse.layout import ExtractTables, RunPaths

SHARD_FILE = "lines.jsonl.zst"
# What stands in a shard for a line the takedown ledger took out at read (or apply took out since):
# one line still, so line numbers hold, with not a word of the post; the filter counts it as `takedown`.
TAKEN_DOWN = b'{"express":"taken down"}'
STOP_EVERY = 1000  # lines read between two looks for a stop the user asked for


@dataclass(frozen=True)
class ShardPaths(ExtractTables):
    """The files of one shard folder (or of a folder its labels are re-derived in): the one place
    that names them."""

    @property
    def lines(self) -> Path:
        return self.root / SHARD_FILE  # the raw lines the split cut

    @property
    def posts(self) -> Path:
        return self.root / "posts.parquet"  # the posts the filter step kept

    @property
    def nsfw_ids(self) -> Path:
        return self.root / "nsfw-submissions.txt"  # ids of its NSFW submissions, one a line (comment join)

    def quarantine(self, step: str) -> Path:
        return self.root / f"quarantine-{step}.parquet"  # what a step (ingest, dedupe, extract) dropped


@dataclass(frozen=True)
class Shard:
    """One shard: its folder, the input it came from and the number of its first line there."""

    path: Path
    source_file: str
    first_line: int
    lines: int
    work: Path | None = None  # where labels are (re-)derived; the shard folder unless re-deriving
    sha256: str = ""  # of its lines file, as the split wrote it

    @property
    def labels_dir(self) -> Path:
        return self.work or self.path

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def run(self) -> RunPaths:
        """The run folder the shard belongs to."""
        return RunPaths.of_shard(self.path)

    @property
    def files(self) -> ShardPaths:
        return ShardPaths(self.path)

    @property
    def labels(self) -> ShardPaths:
        return ShardPaths(self.labels_dir)

    @property
    def lines_file(self) -> Path:
        return self.files.lines

    @property
    def posts(self) -> Path:
        """The posts the filter step kept (dedupe drops rows of it by number)."""
        return self.files.posts

    @property
    def nsfw_ids(self) -> Path:
        return self.files.nsfw_ids

    def quarantine(self, step: str) -> Path:
        """What a step dropped from this shard: ingest and dedupe in the shard folder, extract
        with the labels."""
        return (self.labels if step == "extract" else self.files).quarantine(step)

    @property
    def examples(self) -> Path:
        return self.labels.examples

    @property
    def disclosures(self) -> Path:
        return self.labels.disclosures

    def relabelled(self, work: Path) -> "Shard":
        """The same shard, its labels re-derived in `work` (a rebuild whose rules changed)."""
        return Shard(self.path, self.source_file, self.first_line, self.lines, work, self.sha256)

    def to_dict(self) -> dict[str, Any]:
        d = {"path": str(self.path), "source_file": self.source_file, "first_line": self.first_line,
             "lines": self.lines}
        if self.sha256:
            d["sha256"] = self.sha256
        return {**d, "work": str(self.work)} if self.work else d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Shard":
        work = Path(d["work"]) if d.get("work") else None
        return cls(Path(d["path"]), d["source_file"], int(d["first_line"]), int(d["lines"]), work, d.get("sha256", ""))


def shard_folder(root: Path, stem: str, k: int) -> Path:
    return root / f"{stem}-{k:05d}"


def input_stems(inputs: list[str]) -> dict[str, str]:
    """A folder-safe stem per input; a stem shared by two inputs gets a short hash of its path."""
    stems = {p: Path(p).name.split(".")[0] for p in inputs}
    counts: dict[str, int] = {}
    for s in stems.values():
        counts[s] = counts.get(s, 0) + 1
    return {p: s if counts[s] == 1 else f"{s}.{hashlib.sha256(str(Path(p).resolve()).encode()).hexdigest()[:6]}"
            for p, s in stems.items()}


def shard_lines(shard: Shard) -> Iterator[tuple[int, bytes]]:
    """(line number in the original input, raw bytes) for every line of a shard."""
    for k, line in iter_lines(shard.lines_file):
        if k > shard.lines:
            break
        yield shard.first_line + k - 1, line


def shard_records(shard: Shard) -> Iterator[RawPost | Malformed]:
    """A shard's lines as records, in order (blank lines skipped): a taken-down line is a post
    without an id or a word, where it was read."""
    for k, (n, line) in enumerate(shard_lines(shard)):
        if k % STOP_EVERY == 0:
            stopping.check()  # a Ctrl-C or SIGTERM ends the step here, not at the end of its shard
        if line == TAKEN_DOWN:
            yield RawPost(id="", text="", source_file=shard.source_file, source_line=n)
        elif line.strip():
            yield parse_line(line, shard.source_file, n, "dump")
