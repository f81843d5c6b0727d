"""The split step: cut one input into shards of raw lines (decompress and split only, no parsing).

It is where a build reads, so it honours the takedown ledger the run fixed before anything is
written: a line whose post, author or text the ledger names becomes a tombstone line (only then are
lines read one by one; pipeline/shards.py: TAKEN_DOWN).

Each shard is listed by its own `split.done` marker as soon as it is written, so the build filters
it while the rest of the input is still being split; the step's own marker
(`<run>/shards/split-<stem>.done`) lists them all once the input is done.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard

from common.checksums import sha256_file
from common.files import writing
from pipeline.results import SplitResult
from common.matching.takedowns import TakedownMatcher
from pipeline.shards import TAKEN_DOWN, Shard, ShardPaths, shard_folder
from pipeline.steps import Outputs, Step, read_marker, write_marker
from sources.dumps import DumpError, iter_blocks
from warehouse.layout import RunPaths
from warehouse.ledgers.takedowns import run_takedowns


@dataclass(frozen=True)
class InputFile:
    """One input of a run and how to cut it: the split step's unit."""

    path: str
    shards_dir: Path
    stem: str
    shard_lines: int
    sha256: str | None = None  # the input's hash when the caller already has it (hashed once per run)

    @property
    def name(self) -> str:
        return self.stem


class _ShardFile:
    """One shard's lines streamed into its zstd file (level 1), hashed as written; renamed into
    place by `close`, so a killed split leaves no half shard under the final name."""

    def __init__(self, folder: Path):
        self._file = ExitStack()
        self._fh = self._file.enter_context(writing(ShardPaths(folder).lines, "wb", tag="step"))
        self._zst = zstandard.ZstdCompressor(level=1).compressobj()
        self._sha = hashlib.sha256()

    def write(self, data: bytes | memoryview) -> None:
        self._out(self._zst.compress(data))

    def _out(self, data: bytes) -> None:
        if data:
            self._fh.write(data)
            self._sha.update(data)

    def close(self) -> str:
        """Finish the file and rename it into place; returns its sha256."""
        self._out(self._zst.flush())
        self._file.close()  # the end of `writing`'s block: fsync, rename
        return self._sha.hexdigest()


def _without_taken_down(chunk: bytes, matcher: TakedownMatcher) -> bytes:
    lines = chunk.split(b"\n")
    hits = [i for i, line in enumerate(lines) if matcher.line_hit(line)]
    for i in hits:
        lines[i] = TAKEN_DOWN
    return b"\n".join(lines) if hits else chunk


def honoured(blocks: Iterator[bytes], matcher: TakedownMatcher) -> Iterator[bytes]:
    """The blocks of an input cut at line ends, each line the ledger takes down replaced by the
    tombstone line (as many lines as before)."""
    rest = b""
    for block in blocks:
        block = rest + block if rest else block
        cut = block.rfind(b"\n") + 1
        rest = block[cut:]
        if cut:
            yield _without_taken_down(block[:cut], matcher)
    if rest:
        yield _without_taken_down(rest, matcher)


def _after_newlines(block: bytes, pos: int, wanted: int) -> tuple[int, int]:
    """(end, n): block[pos:end] holds n = min(wanted, newlines left) whole lines' newlines, end
    just after the last of them (the block's end when fewer than `wanted` are left)."""
    left = block.count(b"\n", pos)
    if left < wanted:
        return len(block), left
    end = pos
    for _ in range(wanted):  # only in the block where a shard ends
        end = block.index(b"\n", end) + 1
    return end, wanted


class SplitStep(Step[InputFile, SplitResult]):
    """Lines are counted in decompressed blocks and cut only where a shard ends: no work per line.
    A last line without its newline gets one, so every shard line ends with one."""

    name = "split"
    result = SplitResult

    @classmethod
    def folder(cls, unit: InputFile) -> Path:
        return unit.shards_dir

    @classmethod
    def marker_name(cls, unit: InputFile) -> str:
        return f"split-{unit.stem}"

    def run(self, unit: InputFile, out: Outputs, **params: Any) -> SplitResult:
        if unit.shard_lines < 1:  # a shard of no lines would never move past the first line
            raise ValueError(f"{unit.path}: shards must hold at least 1 line, got {unit.shard_lines}")
        root, stem = unit.shards_dir, unit.stem
        source = str(Path(unit.path))
        shards: list[Shard] = []
        current: _ShardFile | None = None
        first = in_shard = total = 0  # first line of the open shard, its lines so far, lines before it
        open_line = False  # the bytes written last end inside a line

        def close_shard() -> None:
            nonlocal current
            shards.append(_finish_shard(root, stem, len(shards), source, first, in_shard, current))
            current = None

        blocks = iter_blocks(unit.path)  # a missing file fails here, before any shard
        if matcher := run_takedowns(RunPaths(unit.shards_dir.parent).takedowns).matcher():
            blocks = honoured(blocks, matcher)
        try:
            for block in blocks:
                pos, view = 0, memoryview(block)
                while pos < len(block):
                    if current is None:
                        current, first, in_shard = _ShardFile(shard_folder(root, stem, len(shards))), total + 1, 0
                    end, n = _after_newlines(block, pos, unit.shard_lines - in_shard)
                    current.write(view[pos:end])
                    in_shard, total, pos = in_shard + n, total + n, end
                    open_line = block[end - 1] != 10  # 10: b"\n"
                    if in_shard == unit.shard_lines:
                        close_shard()
        except DumpError as exc:
            raise DumpError(f"{exc}; {total} complete lines were read before it") from exc
        if open_line:  # the last line has no newline: it is a line all the same
            current.write(b"\n")
            in_shard, total = in_shard + 1, total + 1
        if current is not None or not shards:
            if current is None:  # an empty input: one empty shard
                current, first = _ShardFile(shard_folder(root, stem, 0)), 1
            close_shard()
        return SplitResult(source, stem, unit.sha256 or sha256_file(unit.path), total, unit.shard_lines, shards)


def _finish_shard(root: Path, stem: str, k: int, source: str, first: int, lines: int, file: _ShardFile) -> Shard:
    """Finish shard k and write its `split.done` marker (its entry), so the build can filter the
    shard while the rest of the input is still being split."""
    shard = Shard(shard_folder(root, stem, k), source, first, lines, sha256=file.close())
    write_marker(shard.path, "split", shard.to_dict())
    return shard


def split_so_far(shards_dir: str | Path, stem: str, start: int = 0) -> list[Shard]:
    """The shards of one input already written, from shard `start` on, in order (the split writes
    them in order; one left by an interrupted split of the same run is identical)."""
    found: list[Shard] = []
    while (entry := read_marker(shard_folder(Path(shards_dir), stem, start + len(found)), "split")) is not None:
        found.append(Shard.from_dict(entry))
    return found
