"""The dedupe step: exact and near duplicates over every shard of a run, in reading order, on one
worker (the algorithm and its DuckDB state: filters/dedupe.py).

A shard's marker lists the rows of its posts.parquet that were dropped (no copy of the kept posts
is written); finished shards are not rewritten, but still count for what later shards repeat.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from filters.dedupe import dedupe_filters, shard_drops
from pipeline.filter_shards import filter_chain
from pipeline.results import DedupeResult
from pipeline.run import load_saved_recipe
from pipeline.shards import Shard, commit, read_marker, seconds_since, tmp_name, write_marker
from pipeline.worker_memory import hand_back_memory
from schemas.funnel import Funnel
from schemas.records import QUARANTINE, RawPost, quarantine_values
from warehouse.parquet import ParquetSink, iter_tuples

# What the quarantine rows of dropped posts read of posts.parquet
DEDUPE_COLUMNS = ["id", "text", "source_file", "source_line"]
# What extraction (extractors/examples.py) and its quarantine rows read of a kept post: half the
# cost of converting whole rows, for every post of a shard.
EXTRACT_COLUMNS = ["id", "text", "subreddit", "created_utc", "source_file", "source_line"]


def dedupe_shards(shards: list[dict[str, Any]], recipe_path: str) -> list[DedupeResult]:
    """Apply the stateful filters to every shard in order and write the markers of unfinished ones."""
    hand_back_memory()  # this worker's language model and free heap, while DuckDB works here
    parsed = [Shard.from_dict(d) for d in shards]
    done = [read_marker(s.path, "dedupe") for s in parsed]
    if all(d is not None for d in done):
        return [DedupeResult.from_marker(d) for d in done]
    recipe = load_saved_recipe(recipe_path)
    exact, near = dedupe_filters(filter_chain(recipe)[1])
    spill = parsed[-1].path.parent.parent / "dedupe-spill"  # <run>/, beside shards/
    results = []
    for s, marker, rows in zip(parsed, done, shard_drops([s.path for s in parsed], exact, near, spill)):
        results.append(DedupeResult.from_marker(marker) if marker is not None else _write(s, rows))
    return results


def _write(s: Shard, rows: list[tuple[int, str]]) -> DedupeResult:
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
                dropped.write_values(quarantine_values("ingest", RawPost(**post), reason))
    funnel.check(f"dedupe {s.name}")
    commit([quarantine_path])
    result = DedupeResult(s.name, funnel, seconds_since(started), False, [row for row, _ in rows])
    write_marker(s.path, "dedupe", result.to_marker())
    return result


def kept_posts(shard: Shard) -> Iterator[RawPost]:
    """The shard's posts that passed every filter (posts.parquet minus the rows dedupe dropped),
    with the fields extraction reads (EXTRACT_COLUMNS); the others keep their defaults."""
    done = read_marker(shard.path, "dedupe")
    if done is None:
        raise RuntimeError(f"{shard.path}: dedupe has not finished for this shard")
    dropped = set(done["dropped_rows"])
    for row, values in enumerate(iter_tuples(shard.path / "posts.parquet", EXTRACT_COLUMNS)):
        if row not in dropped:
            post_id, text, subreddit, created_utc, source_file, source_line = values  # EXTRACT_COLUMNS
            yield RawPost(id=post_id, text=text, subreddit=subreddit, created_utc=created_utc,
                          source_file=source_file, source_line=source_line)
