"""Exact duplicates across shards without holding every hash in memory.

Each shard's filter pass writes the 16-byte hash of every kept post (in posts.parquet row order)
to `dup-keys.parquet`. One DuckDB query over all shards' key files then finds every post whose
hash occurred earlier (an earlier shard, or an earlier row of the same shard): the same posts
`ExactDuplicateFilter` drops when it reads the shards in order, but the hashing runs in parallel
and the memory is DuckDB's limit (it spills to disk beyond it), not a set that grows with input.
A post's position is (file index << 32) + row, so positions sort in reading order.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import duckdb
import pyarrow as pa

from common.duck import sql_path

KEYS_FILE = "dup-keys.parquet"
KEYS = pa.schema([("key", pa.binary(16))])
ROW_BITS = 32  # a shard holds fewer than 2**32 rows; (shard, row) packs into one BIGINT
ROW_MASK = (1 << ROW_BITS) - 1
BATCH_ROWS = 65_536  # result rows fetched at a time: results stream, they are never all in memory


def connect(temp_dir: Path, memory_limit: str, threads: int = 1, database: Path | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection (in memory, or to a `database` file) that spills to `temp_dir` beyond
    `memory_limit`."""
    temp_dir.mkdir(parents=True, exist_ok=True)
    return duckdb.connect(str(database) if database else ":memory:",
                          config={"memory_limit": memory_limit, "temp_directory": str(temp_dir), "threads": threads,
                                  "preserve_insertion_order": False})  # (every query here sorts what it returns)


def repeated_positions(key_files: Iterable[Path], temp_dir: Path, memory_limit: str = "32MB") -> Iterator[int]:
    """Positions, in order, of the rows whose key occurred earlier, files taken in the given order."""
    files = list(key_files)
    if not files:
        return
    parts = " UNION ALL ".join(
        f"SELECT ({k}::BIGINT << {ROW_BITS}) + file_row_number AS pos, key "
        f"FROM read_parquet({sql_path(p)}, file_row_number = true)" for k, p in enumerate(files))
    query = f"""
        WITH keyed AS ({parts}),
        firsts AS (SELECT key, min(pos) AS first FROM keyed GROUP BY key HAVING count(*) > 1)
        SELECT keyed.pos FROM keyed JOIN firsts USING (key) WHERE keyed.pos > firsts.first ORDER BY keyed.pos
    """
    con = connect(temp_dir, memory_limit)
    try:
        for batch in con.execute(query).to_arrow_reader(BATCH_ROWS):
            yield from batch.column(0).to_pylist()
    finally:
        con.close()


def repeated_rows(key_files: Iterable[Path], temp_dir: Path, memory_limit: str = "32MB") -> dict[int, list[int]]:
    """{file index: sorted row numbers whose key occurred earlier}, files taken in the given order."""
    out: dict[int, list[int]] = {}
    for pos in repeated_positions(key_files, temp_dir, memory_limit):
        out.setdefault(pos >> ROW_BITS, []).append(pos & ROW_MASK)
    return out
