"""De-duplication across the shards of a run, in reading order, with its state in DuckDB.

Each shard's filter step writes, row-aligned with its posts.parquet, the keys dedupe needs:
`dup-keys.parquet` (exact duplicates), `near-signatures.npy` and `near-bands.parquet` (MinHash
signature and LSH band keys of near duplicates). Dedupe then reads no text to decide: repeated exact
keys in one query over all shards (duplicate_index.py), near duplicates shard by shard
(near_index.py). Memory is bounded by shard size, not input. The in-memory filters
(`ExactDuplicateFilter.check`, `NearDuplicateFilter.check`) are the oracle the tests compare with.
"""
from __future__ import annotations

import shutil
from collections.abc import Iterator
from itertools import groupby
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from filters.base import Filter
from filters.duplicate_index import KEYS_FILE, ROW_BITS, ROW_MASK, repeated_positions
from filters.near_duplicates import NearDuplicateFilter
from filters.near_index import BANDS_FILE, NearIndex
from filters.reddit import ExactDuplicateFilter

# MinHash signature (uint32 x num_perm) of every kept post, row-aligned with posts.parquet
NEAR_SIGNATURES = "near-signatures.npy"


def is_stateful(f: Filter) -> bool:
    """Filters that remember earlier records (duplicates) must see every shard in order."""
    return bool(getattr(f, "stateful", False))


def split_chain(chain: list[Filter]) -> tuple[list[Filter], list[Filter]]:
    """(stateless filters, run per shard in parallel; stateful ones, run by dedupe in order)."""
    return [f for f in chain if not is_stateful(f)], [f for f in chain if is_stateful(f)]


def dedupe_filters(stateful: list[Filter]) -> tuple[ExactDuplicateFilter | None, NearDuplicateFilter | None]:
    """(exact, near) of a stateful chain: exact and/or near duplicates, in that order (exact sees
    every post, near only those exact kept), the only stateful filters there are."""
    kinds = [type(f) for f in stateful]
    if kinds not in ([], [ExactDuplicateFilter], [NearDuplicateFilter], [ExactDuplicateFilter, NearDuplicateFilter]):
        raise ValueError(f"unsupported stateful filter chain {[k.__name__ for k in kinds]}: dedupe handles "
                         "exact then near duplicates")
    exact = next((f for f in stateful if isinstance(f, ExactDuplicateFilter)), None)
    near = next((f for f in stateful if isinstance(f, NearDuplicateFilter)), None)
    return exact, near


def key_files(exact: ExactDuplicateFilter | None, near: NearDuplicateFilter | None) -> list[str]:
    """The per-shard files the filter step writes for dedupe."""
    return ([KEYS_FILE] if exact else []) + ([BANDS_FILE, NEAR_SIGNATURES] if near else [])


def check_signatures(shard_dir: Path, posts: Path, near: NearDuplicateFilter) -> None:
    """A shard's signature file must have one row of num_perm uint32 per kept post (`posts`)."""
    path = shard_dir / NEAR_SIGNATURES
    sigs = np.load(path, mmap_mode="r")
    rows = pq.ParquetFile(posts).metadata.num_rows
    if sigs.shape != (rows, near.num_perm) or sigs.dtype != np.uint32:
        raise ValueError(f"{path}: signatures of shape {sigs.shape} {sigs.dtype} do not match {rows} kept posts "
                         f"x {near.num_perm} permutations; delete the shard's filter.done to redo it")


def _rows_by_shard(positions: Iterator[int]) -> Iterator[tuple[int, list[int]]]:
    """Group sorted positions into (shard index, rows)."""
    for k, group in groupby(positions, key=lambda pos: pos >> ROW_BITS):
        yield k, [pos & ROW_MASK for pos in group]


def shard_drops(shard_dirs: list[Path], posts: list[Path], exact: ExactDuplicateFilter | None,
                near: NearDuplicateFilter | None, spill: Path) -> Iterator[list[tuple[int, str]]]:
    """For each shard in order (its folder, its kept posts), the sorted (row, reason) of its posts
    that repeat an earlier post of the run (an earlier shard or an earlier row). Exact duplicates are
    decided first and the near filter never sees them, as in the filter chain. DuckDB spills to
    `spill` (removed after)."""
    for d, kept in zip(shard_dirs, posts):
        missing = [f for f in key_files(exact, near) if not (d / f).exists()]
        if missing:
            raise FileNotFoundError(f"{d}: missing {', '.join(missing)}; delete the shard's filter.done to redo it")
        if near is not None:
            check_signatures(d, kept, near)  # a file of the wrong shape stops dedupe before anything is written
    shutil.rmtree(spill, ignore_errors=True)
    repeats = _rows_by_shard(repeated_positions([d / KEYS_FILE for d in shard_dirs], spill / "exact")) \
        if exact else iter(())
    index = NearIndex(near, [d / BANDS_FILE for d in shard_dirs], [d / NEAR_SIGNATURES for d in shard_dirs],
                      spill / "near") if near else None
    pending = next(repeats, None)
    try:
        for k in range(len(shard_dirs)):
            rows: list[tuple[int, str]] = []
            if pending is not None and pending[0] == k:
                rows, pending = [(row, exact.name) for row in pending[1]], next(repeats, None)
            if index is not None:
                rows = sorted(rows + [(row, near.name) for row in index.shard_drops({row for row, _ in rows})])
            yield rows
    finally:
        if index is not None:
            index.close()
        shutil.rmtree(spill, ignore_errors=True)
