"""The dedupe step: exact and near duplicates over every shard of a run, in reading order, on one
worker (the algorithm and its DuckDB state: filters/dedupe.py).

A shard's marker lists the rows of its posts.parquet that were dropped (no copy of the kept posts
is written); finished shards are not rewritten, but still count for what later shards repeat.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from common.parquet import ParquetSink, iter_tuples
from filters.dedupe import dedupe_filters, shard_drops
from pipeline.filter_shards import filter_chain
from pipeline.results import DedupeResult
from pipeline.shards import Shard
from pipeline.steps import OrderedStep, Outputs, read_marker
from schemas.config import Recipe
from schemas.funnel import Funnel
from schemas.records import QUARANTINE, RawPost, quarantine_values

# What the quarantine rows of dropped posts read of posts.parquet
DEDUPE_COLUMNS = ["id", "text", "source_file", "source_line"]


class DedupeStep(OrderedStep[Shard, DedupeResult]):
    """Drops the posts that repeat an earlier post of the run; reads only the dropped rows' text."""

    name = "dedupe"
    result = DedupeResult
    replaces = ("filter",)  # this worker's language model and free heap, while DuckDB works here

    def setup(self, recipe: Recipe) -> None:
        super().setup(recipe)
        self.exact, self.near = dedupe_filters(filter_chain(recipe)[1])

    @classmethod
    def folder(cls, unit: Shard) -> Path:
        return unit.path

    def begin(self, units: list[Shard]) -> None:
        spill = units[-1].run.dedupe_spill
        self._drops = shard_drops([s.path for s in units], [s.posts for s in units], self.exact, self.near, spill)

    def skip(self, unit: Shard) -> None:
        next(self._drops)

    def end(self) -> None:
        self._drops.close()

    def run(self, unit: Shard, out: Outputs, **params: Any) -> DedupeResult:
        rows = next(self._drops)
        total = pq.ParquetFile(unit.posts).metadata.num_rows
        funnel = Funnel(read=total, kept=total - len(rows))
        with ParquetSink(out(unit.quarantine("dedupe")), QUARANTINE) as dropped:
            if rows:
                table = pq.read_table(unit.posts, columns=DEDUPE_COLUMNS).take([row for row, _ in rows])
                for (_, reason), post in zip(rows, table.to_pylist(), strict=True):
                    funnel.drop(reason)
                    dropped.write_values(quarantine_values("ingest", RawPost(**post), reason))
        return DedupeResult(unit.name, funnel, dropped_rows=[row for row, _ in rows])


def kept_posts(shard: Shard, columns: tuple[str, ...]) -> Iterator[RawPost]:
    """The shard's posts that passed every filter (posts.parquet minus the rows dedupe dropped),
    rebuilt by name from `columns` of posts.parquet; the other fields keep their defaults."""
    done = read_marker(shard.path, DedupeStep.name)
    if done is None:
        raise RuntimeError(f"{shard.path}: dedupe has not finished for this shard")
    dropped = set(done["dropped_rows"])
    for row, values in enumerate(iter_tuples(shard.posts, list(columns))):
        if row not in dropped:
            yield RawPost(**dict(zip(columns, values)))
