"""Shards of a run: deterministic names, atomic outputs and `.done` markers (the only resume), and
the cheap split.

A shard is a contiguous range of raw lines of one input file, stored under
`<run>/shards/<input-stem>-<k:05d>/`. Every step writes its files under temporary names and
renames them into place before writing its marker, so a marker means "finished and complete";
a killed step leaves no marker and is simply redone.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard

from pipeline.results import SplitResult
from schemas.checksums import sha256_file
from sources.dumps import DumpError, iter_blocks, iter_lines

SHARD_FILE = "lines.jsonl.zst"


@dataclass(frozen=True)
class Shard:
    """One shard: its folder, the input it came from and the number of its first line there."""

    path: Path
    source_file: str
    first_line: int
    lines: int
    work: Path | None = None  # where labels are (re-)derived; the shard folder unless re-deriving

    @property
    def labels_dir(self) -> Path:
        return self.work or self.path

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def lines_file(self) -> Path:
        return self.path / SHARD_FILE

    def to_dict(self) -> dict[str, Any]:
        d = {"path": str(self.path), "source_file": self.source_file, "first_line": self.first_line,
             "lines": self.lines}
        return {**d, "work": str(self.work)} if self.work else d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Shard":
        work = Path(d["work"]) if d.get("work") else None
        return cls(Path(d["path"]), d["source_file"], int(d["first_line"]), int(d["lines"]), work)


def marker(folder: Path, step: str) -> Path:
    return folder / f"{step}.done"


def read_marker(folder: Path, step: str) -> dict[str, Any] | None:
    """The counts a finished step recorded, or None when the step has not finished."""
    m = marker(folder, step)
    return json.loads(m.read_text()) if m.exists() else None


def write_marker(folder: Path, step: str, data: dict[str, Any]) -> None:
    """Write the marker atomically (temp name, fsync, rename): it exists only when complete."""
    m = marker(folder, step)
    tmp = m.with_name(m.name + ".tmp")
    with open(tmp, "w") as fh:
        fh.write(json.dumps(data, indent=1, sort_keys=True) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, m)


def seconds_since(started: float) -> float:
    """Seconds since `started` (time.perf_counter()), as a step's result records them."""
    return round(time.perf_counter() - started, 3)


def tmp_name(path: Path) -> Path:
    """Where a step writes `path` before renaming it into place."""
    return path.with_name(f".tmp-{path.name}")


def commit(paths: list[Path]) -> None:
    """Rename each step output from its temporary name to its final name."""
    for p in paths:
        os.replace(tmp_name(p), p)


def input_stems(inputs: list[str]) -> dict[str, str]:
    """A folder-safe stem per input; a stem shared by two inputs gets a short hash of its path."""
    stems = {p: Path(p).name.split(".")[0] for p in inputs}
    counts: dict[str, int] = {}
    for s in stems.values():
        counts[s] = counts.get(s, 0) + 1
    return {p: s if counts[s] == 1 else f"{s}.{hashlib.sha256(str(Path(p).resolve()).encode()).hexdigest()[:6]}"
            for p, s in stems.items()}


class _ShardFile:
    """One shard's lines streamed into its zstd file (level 1), hashed as written; renamed into
    place by `close`, so a killed split leaves no half shard under the final name."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.final = folder / SHARD_FILE
        self._fh = open(tmp_name(self.final), "wb")
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
        self._fh.close()
        commit([self.final])
        return self._sha.hexdigest()


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


def split_input(path: str, shards_dir: str, stem: str, shard_lines: int, sha256: str | None = None) -> SplitResult:
    """Cut one dump into shards of `shard_lines` raw lines (decompress and split only, no parsing);
    `sha256` is the input's hash when the caller already has it (it is computed once per run).
    Lines are counted in decompressed blocks and cut only where a shard ends: no work per line.
    A last line without its newline gets one, so every shard line ends with one.

    Resumable: a finished split is read back from its marker; an unfinished one is redone.
    """
    root = Path(shards_dir)
    done = read_marker(root, f"split-{stem}")
    if done is not None:
        return SplitResult.from_marker(done)
    started = time.perf_counter()
    source = str(Path(path))
    shards: list[dict[str, Any]] = []
    current: _ShardFile | None = None
    first = in_shard = total = 0  # first line of the open shard, its lines so far, lines before it
    open_line = False  # the bytes written last end inside a line

    def close_shard() -> None:
        nonlocal current
        shards.append(_shard_entry(root, stem, len(shards), source, first, in_shard, current))
        current = None

    blocks = iter_blocks(path)  # a missing file fails here, before any shard
    try:
        for block in blocks:
            pos, view = 0, memoryview(block)
            while pos < len(block):
                if current is None:
                    current, first, in_shard = _ShardFile(shard_folder(root, stem, len(shards))), total + 1, 0
                end, n = _after_newlines(block, pos, shard_lines - in_shard)
                current.write(view[pos:end])
                in_shard, total, pos = in_shard + n, total + n, end
                open_line = block[end - 1] != 10  # 10: b"\n"
                if in_shard == shard_lines:
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
    result = SplitResult(source, stem, sha256 or sha256_file(path), total, shard_lines, shards,
                         seconds_since(started))
    write_marker(root, f"split-{stem}", result.to_marker())
    return result


def shard_folder(root: Path, stem: str, k: int) -> Path:
    return root / f"{stem}-{k:05d}"


def _shard_entry(root: Path, stem: str, k: int, source: str, first: int, lines: int, file: _ShardFile) -> dict[str, Any]:
    """Finish shard k and write its `split.done` marker (its entry), so the flow can filter the
    shard while the rest of the input is still being split."""
    folder = shard_folder(root, stem, k)
    digest = file.close()
    entry = {**Shard(folder, source, first, lines).to_dict(), "sha256": digest}
    write_marker(folder, "split", entry)
    return entry


def split_so_far(shards_dir: str | Path, stem: str, start: int = 0) -> list[dict[str, Any]]:
    """Entries of the shards of one input already written, from shard `start` on, in order (the
    split writes them in order; one left by an interrupted split of the same run is identical)."""
    found = []
    while (entry := read_marker(shard_folder(Path(shards_dir), stem, start + len(found)), "split")) is not None:
        found.append(entry)
    return found


def shard_lines(shard: Shard) -> Iterator[tuple[int, bytes]]:
    """(line number in the original input, raw bytes) for every line of a shard."""
    for k, line in iter_lines(shard.lines_file):
        if k > shard.lines:
            break
        yield shard.first_line + k - 1, line
