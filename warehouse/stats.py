"""Release statistics computed with DuckDB over the published Parquet files (report, card, diff)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import duckdb


def _union(files: dict[str, Path]) -> str:
    parts = [f"SELECT *, '{s}' AS split FROM read_parquet('{str(p).replace(chr(39), chr(39) * 2)}')"
             for s, p in files.items()]
    return " UNION ALL ".join(parts)


@dataclass
class ReleaseStats:
    rows: dict[str, int]
    labels: Counter[str]
    masks_per_example: dict[int, int]
    words_per_example: list[int] = field(default_factory=list)
    subreddits: dict[str, int] = field(default_factory=dict)
    segments_per_post: dict[int, int] = field(default_factory=dict)

    @property
    def total_rows(self) -> int:
        return sum(self.rows.values())


def release_stats(files: dict[str, Path]) -> ReleaseStats:
    con = duckdb.connect()
    try:
        con.execute(f"CREATE TEMP VIEW ex AS {_union(files)}")
        rows = dict(con.execute("SELECT split, count(*) FROM ex GROUP BY split").fetchall())
        labels = Counter(dict(con.execute(
            "SELECT l, count(*) FROM (SELECT unnest(labels) AS l FROM ex) GROUP BY l").fetchall()))
        masks = dict(con.execute("SELECT n_masks, count(*) FROM ex GROUP BY n_masks ORDER BY 1").fetchall())
        words = [r[0] for r in con.execute(
            "SELECT len(string_split_regex(trim(text), '\\s+')) FROM ex").fetchall()]
        subs = dict(con.execute("SELECT subreddit, count(*) FROM ex GROUP BY 1 ORDER BY 2 DESC, 1").fetchall())
        segs = dict(con.execute("SELECT n, count(*) FROM (SELECT post_id, count(*) AS n FROM ex GROUP BY 1) "
                                "GROUP BY n ORDER BY n").fetchall())
    finally:
        con.close()
    return ReleaseStats({s: rows.get(s, 0) for s in files}, labels, masks, words, subs, segs)


def example_keys(path: Path) -> set[tuple[str, int]]:
    con = duckdb.connect()
    try:
        lit = str(path).replace("'", "''")
        return {(a, int(b)) for a, b in con.execute(
            f"SELECT post_id, segment_index FROM read_parquet('{lit}')").fetchall()}
    finally:
        con.close()


def size_category(n: int) -> str:
    """The Hugging Face `size_categories` bucket of a row count."""
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                        (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")):
        if n < limit:
            return name
    return "10M<n<100M"
