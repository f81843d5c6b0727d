"""Near-duplicate decisions across shards with the filter's state in DuckDB, not in Python.

Each shard's filter pass writes every kept post's MinHash signature (`near-signatures.npy`) and
its LSH band keys (`near-bands.parquet`: row, band, key; rows as in posts.parquet). `NearIndex`
then decides shard by shard, in reading order, exactly as `NearDuplicateFilter.check` would:

- a band key no other post has can neither drop a post nor be matched later (on real data nearly
  every key is such a one), so one query first finds the keys two or more posts share (table
  `shared`: key, and `pos`, the first kept post that had it, filled in as shards are decided);
- per shard, the posts' band rows are joined with `shared`; a post is dropped if, for one of its
  keys, the first kept post (of an earlier shard: compared all at once, signatures read from their
  shards' files; of this shard: post by post) is similar enough. The keys a kept post is first to
  have get its position in `shared` at the end of the shard.

Python holds one shard's keys and signatures at a time; `shared` lives in a DuckDB database file
that spills beyond its memory limit. So memory is bounded by shard size, not input.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from common.duck import sql_path
from filters.duplicate_index import ROW_BITS, ROW_MASK, connect
from filters.near_duplicates import NearDuplicateFilter

BANDS_FILE = "near-bands.parquet"
BANDS = pa.schema([("row", pa.uint32()), ("band", pa.uint8()), ("key", pa.uint64())])
_KEYS_PER_SLICE_MB = 32_768  # band rows grouped at once per MB of DuckDB's memory limit
_WALK_POSTS = 8_192  # posts with keys new in a shard, walked in Python this many at a time
_COMPARE_ROWS = 8_192  # candidate pairs compared at once (two 2 MB signature blocks)


def write_bands(path: Path, keys: np.ndarray) -> None:
    """Write the (n posts, bands) key matrix as one (row, band, key) line per post and band."""
    n, bands = keys.shape
    table = pa.table({"row": pa.array(np.repeat(np.arange(n, dtype=np.uint32), bands)),
                      "band": pa.array(np.tile(np.arange(bands, dtype=np.uint8), n)),
                      "key": pa.array(keys.reshape(-1))}, schema=BANDS)
    pq.write_table(table, path, compression="zstd")


def signature_rows(paths: Sequence[Path], positions: np.ndarray, num_perm: int) -> np.ndarray:
    """Signatures at `positions` (shard << 32 | row), read through a memory map of each shard's file
    that is dropped again (only the rows asked for are copied)."""
    out = np.empty((len(positions), num_perm), dtype=np.uint32)
    shard, row = positions >> ROW_BITS, positions & ROW_MASK
    for k in np.unique(shard).tolist():
        at = shard == k
        out[at] = np.load(paths[k], mmap_mode="r")[row[at]]
    return out


class NearIndex:
    """The near-duplicate filter over shards taken in order: `shard_drops` once per shard."""

    def __init__(self, near: NearDuplicateFilter, band_files: Sequence[Path], signature_files: Sequence[Path],
                 work_dir: Path, memory_mb: int = 64, threads: int = 2, keys_per_slice: int | None = None):
        self.near, self.band_files, self.signature_files = near, list(band_files), list(signature_files)
        self.next_shard = 0
        work_dir.mkdir(parents=True, exist_ok=True)
        self.added = work_dir / "added.parquet"  # a shard's new first posts, on their way into `shared`
        self.con = connect(work_dir / "tmp", f"{memory_mb}MB", threads, database=work_dir / "near.duckdb")
        if not self.band_files:
            return
        every = " UNION ALL ".join(f"SELECT key FROM read_parquet({sql_path(p)})" for p in self.band_files)
        # shared keys, each with its first kept post once a shard has one (`pos`, NULL until then)
        self.con.execute("CREATE OR REPLACE TABLE shared (key UBIGINT, pos BIGINT)")
        # one slice of the key space at a time: a hash table that fits the memory limit (the keys a
        # slice of each MB may hold were measured where one slice of all keys ran out: history.md)
        total = sum(pq.ParquetFile(p).metadata.num_rows for p in self.band_files)
        parts = 1 + total // (keys_per_slice or memory_mb * _KEYS_PER_SLICE_MB)
        for part in range(parts):
            self.con.execute(f"INSERT INTO shared SELECT key, NULL FROM ({every}) WHERE key % {parts} = {part} "
                             "GROUP BY key HAVING count(*) > 1")

    def shard_drops(self, skip: set[int] | frozenset[int] = frozenset()) -> list[int]:
        """Rows of the next shard that the filter drops; `skip`: rows an earlier filter of the chain
        dropped (the near-duplicate filter never sees them)."""
        k, self.next_shard = self.next_shard, self.next_shard + 1
        # one join, whose hash table DuckDB builds on the smaller side (the shard's rows): `shared`
        # can outgrow the memory limit (a dump read twice shares every key)
        found = self.con.execute(f"""
            SELECT b.row, b.key, s.pos FROM read_parquet({sql_path(self.band_files[k])}) AS b
            JOIN shared AS s USING (key) ORDER BY b.row, b.band
        """).fetchnumpy()  # (no Arrow objects: DuckDB's Python module keeps a little of each for good)
        if not len(found["row"]):
            return []
        row_of, keys = found["row"].astype(np.int64), found["key"]
        firsts = np.ma.filled(found["pos"], -1).astype(np.int64)  # -1: no earlier shard's post has the key
        del found
        sigs = np.load(self.signature_files[k])  # this shard's: bounded by the shard size
        starts = np.flatnonzero(np.r_[True, row_of[1:] != row_of[:-1]])
        post_row = row_of[starts]
        post_of = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(row_of)]))
        skipped = np.isin(post_row, np.fromiter(skip, dtype=np.int64, count=len(skip)))
        # A post is dropped if any band's first kept post is similar (the first band that is decides
        # only which one is named). Those of earlier shards are known now: compared all at once.
        matched = np.zeros(len(row_of), dtype=bool)
        earlier = np.flatnonzero(firsts >= 0)
        for chunk in np.array_split(earlier, -(-len(earlier) // _COMPARE_ROWS) or 1):
            reps, which = np.unique(firsts[chunk], return_inverse=True)
            matched[chunk] = self.near.similar_rows(
                signature_rows(self.signature_files, reps, self.near.num_perm)[which], sigs[row_of[chunk]])
        by_earlier = np.logical_or.reduceat(matched, starts) & ~skipped
        # Then, post by post, keys new in this shard: their first kept post depends on what it drops.
        live = (firsts < 0) & ~(by_earlier | skipped)[post_of]
        new_keys, key_id = np.unique(keys[live], return_inverse=True)
        first, dropped_here = self._first_kept(row_of[live], key_id, len(new_keys), sigs)
        if (kept := first >= 0).any():
            pq.write_table(pa.table({"key": pa.array(new_keys[kept]),
                                     "pos": pa.array((k << ROW_BITS) + first[kept])}), self.added)
            self.con.execute(f"UPDATE shared SET pos = a.pos FROM read_parquet({sql_path(self.added)}) AS a "
                             "WHERE shared.key = a.key")
        return sorted(post_row[by_earlier].tolist() + dropped_here)

    def _first_kept(self, rows: np.ndarray, key_ids: np.ndarray, n_keys: int,
                    sigs: np.ndarray) -> tuple[np.ndarray, list[int]]:
        """Walk the posts in order (`rows`, one per key new in this shard, with its `key_ids`): a post
        is dropped if the first kept post of one of its keys is similar, else it becomes the first
        of those that have none. Returns each key's first kept row (-1: none) and the dropped rows."""
        first, near, dropped = [-1] * n_keys, self.near, []
        starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        bounds = starts[::_WALK_POSTS].tolist() + [len(rows)]
        for lo, hi in zip(bounds, bounds[1:]):  # as Python lists, some thousand posts at a time
            chunk_rows, chunk_ids = rows[lo:hi].tolist(), key_ids[lo:hi].tolist()
            i, n = 0, len(chunk_rows)
            while i < n:
                row, j = chunk_rows[i], i + 1
                while j < n and chunk_rows[j] == row:
                    j += 1
                ids = chunk_ids[i:j]
                sig = sigs[row]
                if any((r := first[t]) >= 0 and near.similar(sigs[r], sig) for t in ids):
                    dropped.append(row)
                else:
                    for t in ids:
                        if first[t] < 0:
                            first[t] = row
                i = j
        return np.array(first, dtype=np.int64), dropped

    def close(self) -> None:
        self.con.close()
