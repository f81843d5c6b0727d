"""The in-order dedupe step of a sharded build: stateful filters (exact and near duplicates) over
every shard in reading order. No Prefect here; flows/sharded.py wires it.

When every shard's filter step wrote its per-post keys (dup-keys.parquet, near-bands.parquet and
near-signatures.npy), dedupe reads no text to decide, and keeps the filters' state in DuckDB:
repeated exact keys in one query over all shards (filters/duplicate_index.py), near duplicates
shard by shard (filters/near_index.py). Memory is then bounded by shard size, not input. Shards
filtered by an older version, or a recipe with another stateful filter, take the in-memory path:
each post through the filters' `check`. Both drop the same rows (tests/flows/test_shards.py).
"""
from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from itertools import groupby
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from filters.base import Filter
from filters.duplicate_index import KEYS_FILE, ROW_BITS, ROW_MASK, repeated_positions
from filters.near_duplicates import NearDuplicateFilter
from filters.near_index import BANDS_FILE, NearIndex
from filters.reddit import ExactDuplicateFilter, filters_from_config
from flows.shards import Shard, commit, read_marker, timed, tmp_name, write_marker
from flows.stages import _quarantine_row, load_saved_recipe
from flows.worker_memory import hand_back_memory
from schemas.funnel import Funnel
from schemas.records import QUARANTINE, RawPost
from warehouse.parquet import ParquetSink, iter_rows

# MinHash signature (uint32 x num_perm) of every kept post, row-aligned with posts.parquet: computing
# it is most of the near-duplicate filter's cost (~0.3 ms a post), done in the parallel filter step
NEAR_SIGNATURES = "near-signatures.npy"
# What the stateful filters (duplicates: the text) and their quarantine rows read of a post;
# reading only these keeps the sequential dedupe pass cheap.
DEDUPE_COLUMNS = ["id", "text", "source_file", "source_line"]


def is_stateful(f: Filter) -> bool:
    """Filters that remember earlier records (duplicates) must see every shard in order."""
    return bool(getattr(f, "stateful", False))


def split_chain(chain: list[Filter]) -> tuple[list[Filter], list[Filter]]:
    return [f for f in chain if not is_stateful(f)], [f for f in chain if is_stateful(f)]


def near_duplicates(stateful: list[Filter]) -> NearDuplicateFilter | None:
    return next((f for f in stateful if isinstance(f, NearDuplicateFilter)), None)


def indexed_filters(stateful: list[Filter]) -> tuple[ExactDuplicateFilter | None, NearDuplicateFilter | None] | None:
    """(exact, near) when the stateful chain is exact and/or near duplicates in that order, which
    the indexed dedupe reproduces (exact sees every post, near only those exact kept); else None."""
    kinds = [type(f) for f in stateful]
    if kinds not in ([ExactDuplicateFilter], [NearDuplicateFilter], [ExactDuplicateFilter, NearDuplicateFilter]):
        return None
    exact = stateful[0] if kinds[0] is ExactDuplicateFilter else None
    return exact, near_duplicates(stateful)


def index_files(stateful: list[Filter]) -> list[str]:
    """The per-shard files the filter step writes so dedupe can take the indexed path."""
    pair = indexed_filters(stateful)
    if pair is None:
        return []
    exact, near = pair
    return ([KEYS_FILE] if exact else []) + ([BANDS_FILE, NEAR_SIGNATURES] if near else [])


def near_signatures(shard: Shard, near: NearDuplicateFilter | None) -> np.ndarray | None:
    """The shard's precomputed signatures (memory-mapped), or None without a near-duplicate filter
    or for a shard filtered before they were written (dedupe then computes them from the text)."""
    path = shard.path / NEAR_SIGNATURES
    if near is None or not path.exists():
        return None
    sigs = np.load(path, mmap_mode="r")
    rows = pq.ParquetFile(shard.path / "posts.parquet").metadata.num_rows
    if sigs.shape != (rows, near.num_perm) or sigs.dtype != np.uint32:
        raise ValueError(f"{path}: signatures of shape {sigs.shape} {sigs.dtype} do not match {rows} kept posts "
                         f"x {near.num_perm} permutations; delete the shard's filter.done to redo it")
    return sigs


def first_objection(stateful: list[Filter], post: RawPost, near: NearDuplicateFilter | None,
                    sig: np.ndarray | None) -> str | None:
    """The reason of the first stateful filter that drops `post` (None: kept); the near-duplicate
    filter uses the precomputed signature when there is one."""
    for f in stateful:
        reason = f.check_signature(np.array(sig)) if f is near and sig is not None else f.check(post)
        if reason is not None:
            return reason
    return None


def dedupe_shards(shards: list[dict[str, Any]], recipe_path: str) -> list[dict[str, Any]]:
    """Apply the stateful filters to every shard in order. A shard's marker lists the rows of its
    posts.parquet that were dropped (no copy of the kept posts is written); finished shards are
    not rewritten, but still count for what later shards duplicate."""
    hand_back_memory()  # this worker's language model and free heap, while DuckDB works here
    recipe = load_saved_recipe(recipe_path)
    _, stateful = split_chain(filters_from_config(recipe.filters))
    files = index_files(stateful)
    if files and all((Path(d["path"]) / f).exists() for d in shards for f in files):
        return _dedupe_indexed(shards, *indexed_filters(stateful))
    return _dedupe_in_memory(shards, stateful)


def _dedupe_in_memory(shards: list[dict[str, Any]], stateful: list[Filter]) -> list[dict[str, Any]]:
    """Every post through the filters' `check`; finished shards are replayed (no writes) so the
    filters' memory is the same as in an uninterrupted run."""
    near = near_duplicates(stateful)
    results = []
    for d in shards:
        s = Shard.from_dict(d)
        done = read_marker(s.path, "dedupe")
        posts = (RawPost(**row) for row in iter_rows(s.path / "posts.parquet", DEDUPE_COLUMNS))
        sigs = near_signatures(s, near)
        if done is not None:
            for row, post in enumerate(posts):
                first_objection(stateful, post, near, None if sigs is None else sigs[row])
            results.append({**done, "skipped": True})
            continue
        started = time.perf_counter()
        funnel, dropped_rows = Funnel(), []
        quarantine_path = s.path / "quarantine-dedupe.parquet"
        with ParquetSink(tmp_name(quarantine_path), QUARANTINE) as dropped:
            for row, post in enumerate(posts):
                funnel.read += 1
                reason = first_objection(stateful, post, near, None if sigs is None else sigs[row])
                if reason is None:
                    funnel.kept += 1
                else:
                    funnel.drop(reason)
                    dropped_rows.append(row)
                    dropped.write(_quarantine_row("ingest", post, reason))
        results.append(_finish_dedupe(s, funnel, dropped_rows, quarantine_path, started))
    return results


def _rows_by_shard(positions: Iterator[int]) -> Iterator[tuple[int, list[int]]]:
    """Group sorted positions into (shard index, rows)."""
    for k, group in groupby(positions, key=lambda pos: pos >> ROW_BITS):
        yield k, [pos & ROW_MASK for pos in group]


def _dedupe_indexed(shards: list[dict[str, Any]], exact: ExactDuplicateFilter | None,
                    near: NearDuplicateFilter | None) -> list[dict[str, Any]]:
    """Decide from the shards' key files in DuckDB (same drops as the in-memory path); writes the
    markers of unfinished shards. Exact duplicates are decided first, and the near-duplicate
    filter never sees them, as in the filter chain."""
    todo = [read_marker(Path(d["path"]), "dedupe") is None for d in shards]
    if not any(todo):
        return [{**read_marker(Path(d["path"]), "dedupe"), "skipped": True} for d in shards]
    parsed = [Shard.from_dict(d) for d in shards]
    if near is not None:
        for s in parsed:
            near_signatures(s, near)  # a file of the wrong shape stops dedupe before anything is written
    spill = parsed[-1].path.parent.parent / "dedupe-spill"  # <run>/, beside shards/
    shutil.rmtree(spill, ignore_errors=True)
    repeats = _rows_by_shard(repeated_positions([s.path / KEYS_FILE for s in parsed], spill / "exact")) \
        if exact else iter(())
    index = NearIndex(near, [s.path / BANDS_FILE for s in parsed], [s.path / NEAR_SIGNATURES for s in parsed],
                      spill / "near") if near else None
    results, pending = [], next(repeats, None)
    try:
        for k, (s, is_todo) in enumerate(zip(parsed, todo)):
            rows = []
            if pending is not None and pending[0] == k:
                rows, pending = [(row, exact.name) for row in pending[1]], next(repeats, None)
            if index is not None:
                rows = sorted(rows + [(row, near.name) for row in index.shard_drops({row for row, _ in rows})])
            if is_todo:
                results.append(_write_indexed(s, rows))
            else:
                results.append({**read_marker(s.path, "dedupe"), "skipped": True})
    finally:
        if index is not None:
            index.close()
        shutil.rmtree(spill, ignore_errors=True)
    return results


def _write_indexed(s: Shard, rows: list[tuple[int, str]]) -> dict[str, Any]:
    """A shard's dedupe outputs from its dropped (row, reason)s: reads only those rows' text."""
    started = time.perf_counter()
    posts_file = s.path / "posts.parquet"
    total = pq.ParquetFile(posts_file).metadata.num_rows
    funnel = Funnel(read=total, kept=total - len(rows))
    quarantine_path = s.path / "quarantine-dedupe.parquet"
    with ParquetSink(tmp_name(quarantine_path), QUARANTINE) as dropped:
        if rows:
            table = pq.read_table(posts_file, columns=DEDUPE_COLUMNS).take([row for row, _ in rows])
            for (_, reason), post in zip(rows, table.to_pylist()):
                funnel.drop(reason)
                dropped.write(_quarantine_row("ingest", RawPost(**post), reason))
    return _finish_dedupe(s, funnel, [row for row, _ in rows], quarantine_path, started)


def _finish_dedupe(s: Shard, funnel: Funnel, dropped_rows: list[int], quarantine_path: Path,
                   started: float) -> dict[str, Any]:
    """Check the shard's funnel, put its quarantine file in place and write its marker."""
    funnel.check(f"dedupe {s.name}")
    commit([quarantine_path])
    result = timed({"shard": s.name, "funnel": funnel.to_dict(), "dropped_rows": dropped_rows}, started)
    write_marker(s.path, "dedupe", result)
    return {**result, "skipped": False}
