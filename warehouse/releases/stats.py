"""Release statistics computed with DuckDB over the published Parquet files (report, card, diff, gate).

Distributions are kept as value -> count tables, never as one value per row, so a release of
millions of rows costs a few small tables here.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from common.duck import sql_path, sql_str  # noqa: F401 (the statistics' SQL, re-exported)


def union_sql(files: dict[str, Path]) -> str:
    """The split files as one table with a `split` column."""
    return " UNION ALL ".join(f"SELECT *, '{s}' AS split FROM read_parquet({sql_path(p)})" for s, p in files.items())


def rows_by_month(files: dict[str, Path]) -> dict[str, dict[str, int]]:
    """Rows per month of posting (UTC) and split, months in order: which time windows of a release
    hold enough rows to score a model on."""
    con = connect()
    try:
        found = con.execute("SELECT strftime(epoch_ms(created_utc::BIGINT * 1000), '%Y-%m') AS month, split, "
                            f"count(*) FROM ({union_sql(files)}) GROUP BY ALL ORDER BY 1").fetchall()
    finally:
        con.close()
    months: dict[str, dict[str, int]] = {}
    for month, split, n in found:
        months.setdefault(month, {s: 0 for s in files})[split] = int(n)
    return months


@dataclass
class ReleaseStats:
    rows: dict[str, int]
    labels: Counter[str]  # canonical labels (vocabulary)
    masks_per_example: dict[int, int]  # masks -> segments
    words: dict[int, int] = field(default_factory=dict)  # words in a segment -> segments
    subreddits: dict[str, int] = field(default_factory=dict)
    segments_per_post: dict[int, int] = field(default_factory=dict)
    surfaces: Counter[str] = field(default_factory=Counter)  # masked words, lower-cased (the paper's labels)
    masks: dict[str, int] = field(default_factory=dict)  # per split
    created: tuple[int, int] | None = None  # first and last post time (Unix seconds)
    marks: dict[str, tuple[int, int]] = field(default_factory=dict)  # counted string -> (occurrences, segments)

    @property
    def total_rows(self) -> int:
        return sum(self.rows.values())

    @property
    def total_masks(self) -> int:
        return sum(self.labels.values())

    @property
    def posts(self) -> int:
        return sum(self.segments_per_post.values())

    def ranked_labels(self, n: int | None = None) -> list[tuple[str, int]]:
        """Labels by masks, most first; ties by name, so the same release always ranks the same."""
        return sorted(self.labels.items(), key=lambda kv: (-kv[1], kv[0]))[:n]

    @property
    def masks_per_segment(self) -> float:
        return mean(self.masks_per_example)

    @property
    def words_summary(self) -> "Summary":
        return Summary.of(self.words)


@dataclass(frozen=True)
class Summary:
    """Mean, median, min and max of a value -> count table (0 for an empty table)."""

    count: int
    mean: float
    median: int
    min: int
    max: int

    @classmethod
    def of(cls, table: dict[int, int]) -> "Summary":
        n = sum(table.values())
        if not n:
            return cls(0, 0.0, 0, 0, 0)
        seen, median = 0, 0
        for value in sorted(table):  # the lower median: a value of the table
            seen += table[value]
            if seen * 2 >= n:
                median = value
                break
        return cls(n, mean(table), median, min(table), max(table))


def mean(table: dict[int, int]) -> float:
    n = sum(table.values())
    return sum(k * v for k, v in table.items()) / n if n else 0.0


def connect() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB for statistics, quiet on the terminal."""
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")  # it would draw on the terminal of a long query
    return con


def release_stats(files: dict[str, Path], marks: Sequence[str] = ()) -> ReleaseStats:
    """The release's statistics; `marks`: strings to count in its texts (the scrubber's placeholders)."""
    con = connect()
    try:
        con.execute(f"CREATE TEMP VIEW ex AS {union_sql(files)}")
        per_split = {s: (r, m) for s, r, m in con.execute(
            "SELECT split, count(*), coalesce(sum(n_masks), 0) FROM ex GROUP BY split").fetchall()}
        labels = Counter(dict(con.execute(
            "SELECT l, count(*) FROM (SELECT unnest(labels) AS l FROM ex) GROUP BY l").fetchall()))
        surfaces = Counter(dict(con.execute(
            "SELECT lower(s), count(*) FROM (SELECT unnest(surfaces) AS s FROM ex) GROUP BY 1").fetchall()))
        masks = dict(con.execute("SELECT n_masks, count(*) FROM ex GROUP BY n_masks ORDER BY 1").fetchall())
        subs = dict(con.execute("SELECT subreddit, count(*) FROM ex GROUP BY 1 ORDER BY 2 DESC, 1").fetchall())
        segs = dict(con.execute("SELECT n, count(*) FROM (SELECT post_id, count(*) AS n FROM ex GROUP BY 1) "
                                "GROUP BY n ORDER BY n").fetchall())
        first, last = con.execute("SELECT min(created_utc), max(created_utc) FROM ex").fetchone()
    finally:
        con.close()
    facts = text_facts(files, marks)
    return ReleaseStats({s: per_split.get(s, (0, 0))[0] for s in files}, labels, masks, facts.words, subs, segs,
                        surfaces, {s: int(per_split.get(s, (0, 0))[1]) for s in files},
                        (int(first), int(last)) if first is not None else None, facts.marks)


@dataclass
class TextFacts:
    words: dict[int, int]  # words (whitespace-separated) in a segment -> segments
    marks: dict[str, tuple[int, int]]  # a string -> (occurrences in the texts, segments holding it)


def text_facts(files: dict[str, Path], marks: Sequence[str] = ()) -> TextFacts:
    """One pass over the released texts, a batch at a time: the words of each segment, and how often
    each of `marks` (e.g. the scrubber's placeholders) occurs. Python's str.split and str.count
    over Arrow batches: faster than DuckDB's regex split."""
    words: Counter[int] = Counter()
    found = {m: [0, 0] for m in marks}
    for path in files.values():
        for batch in pq.ParquetFile(path).iter_batches(columns=["text"], batch_size=4096):
            texts = batch.column(0).to_pylist()
            words.update(len(t.split()) for t in texts)
            for m, acc in found.items():
                counts = [t.count(m) for t in texts]
                acc[0] += sum(counts)
                acc[1] += sum(1 for c in counts if c)
    return TextFacts(dict(sorted(words.items())), {m: (n, k) for m, (n, k) in found.items()})


def label_counts(files: dict[str, Path]) -> Counter[str]:
    """Label occurrences over the given split files."""
    if not files:
        return Counter()
    con = connect()
    try:
        rows = con.execute(f"SELECT l, count(*) FROM (SELECT unnest(labels) AS l FROM ({union_sql(files)})) "
                           "GROUP BY l").fetchall()
    finally:
        con.close()
    return Counter({str(label): int(n) for label, n in rows})


def js_divergence(p: Counter[str], q: Counter[str]) -> float:
    """Jensen-Shannon divergence (base 2, in [0, 1]) between two label count tables."""
    tp, tq = sum(p.values()), sum(q.values())
    if not tp or not tq:
        return 0.0 if tp == tq else 1.0
    total = 0.0
    for label in set(p) | set(q):
        a, b = p.get(label, 0) / tp, q.get(label, 0) / tq
        m = (a + b) / 2
        total += (a * math.log2(a / m) if a else 0.0) + (b * math.log2(b / m) if b else 0.0)
    return max(0.0, total / 2)


def example_key_changes(a: dict[str, Path], b: dict[str, Path]) -> dict[str, dict[str, int]]:
    """Per split: rows of A and B, and rows added, removed and kept, keyed by (post_id, segment_index)."""
    out: dict[str, dict[str, int]] = {}
    con = connect()
    try:
        for split in dict.fromkeys([*a, *b]):
            ka = (f"SELECT DISTINCT post_id, segment_index FROM read_parquet({sql_path(a[split])})" if split in a
                  else "SELECT NULL::VARCHAR AS post_id, NULL::BIGINT AS segment_index WHERE false")
            kb = (f"SELECT DISTINCT post_id, segment_index FROM read_parquet({sql_path(b[split])})" if split in b
                  else "SELECT NULL::VARCHAR AS post_id, NULL::BIGINT AS segment_index WHERE false")
            rows_a, rows_b, kept = con.execute(
                f"WITH ka AS ({ka}), kb AS ({kb}) SELECT (SELECT count(*) FROM ka), (SELECT count(*) FROM kb), "
                "(SELECT count(*) FROM ka JOIN kb USING (post_id, segment_index))").fetchone()
            out[split] = {"rows_a": rows_a, "rows_b": rows_b, "added": rows_b - kept, "removed": rows_a - kept,
                          "kept": kept}
    finally:
        con.close()
    return out


def size_category(n: int) -> str:
    """The Hugging Face `size_categories` bucket of a row count."""
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                        (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")):
        if n < limit:
            return name
    return "10M<n<100M"
