"""Streaming Parquet writer: rows go out in batches, so memory does not grow with input size."""
from __future__ import annotations

from operator import attrgetter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

BATCH_ROWS = 2048


class ParquetSink:
    """Append rows (dicts, or records whose attributes are named like the columns) to one Parquet
    file with a fixed schema; always produces a file."""

    def __init__(self, path: str | Path, schema: pa.Schema, batch_rows: int = BATCH_ROWS):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.schema = schema
        self.batch_rows = batch_rows
        self.rows = 0
        self._names = tuple(schema.names)
        self._buf: list[tuple[Any, ...]] = []  # rows as tuples in column order
        self._arrow: list[pa.RecordBatch] = []  # or batches, from write_batch
        self._arrow_rows = 0
        values = attrgetter(*self._names)
        self._values = values if len(self._names) > 1 else lambda record: (values(record),)
        self._writer = pq.ParquetWriter(self.path, schema, compression="zstd")

    def write(self, row: dict[str, Any]) -> None:
        """One row as a dict; a missing key is a null."""
        self._buf.append(tuple(map(row.get, self._names)))
        if len(self._buf) >= self.batch_rows:
            self._flush()

    def write_values(self, values: tuple[Any, ...]) -> None:
        """One row as a tuple in the schema's column order: no dict per row, for writers of most of a
        dump's lines (the ingest quarantine), where a dict a row costs several times more."""
        if len(values) != len(self._names):
            raise ValueError(f"{self.path}: a row of {len(values)} values for {len(self._names)} columns")
        self._buf.append(values)
        if len(self._buf) >= self.batch_rows:
            self._flush()

    def write_record(self, record: object) -> None:
        """One row from a record's attributes (e.g. a RawPost): no dict per row, at half the cost."""
        self._buf.append(self._values(record))
        if len(self._buf) >= self.batch_rows:
            self._flush()

    def write_batch(self, batch: pa.RecordBatch) -> None:
        """Rows already in Arrow (in the sink's schema): no Python object per value. Row groups
        still close at about `batch_rows` rows."""
        if batch.schema != self.schema:
            raise ValueError(f"{self.path}: batch schema differs from the sink's:\n{batch.schema}\nvs\n{self.schema}")
        self._flush()  # rows written one by one before keep their order
        self._arrow.append(batch)
        self._arrow_rows += len(batch)
        if self._arrow_rows >= self.batch_rows:
            self._flush()

    def _flush(self) -> None:
        if self._arrow:
            self._writer.write_table(pa.Table.from_batches(self._arrow, schema=self.schema))
            self.rows += self._arrow_rows
            self._arrow, self._arrow_rows = [], 0
        if self._buf:
            # column-wise: much cheaper per row than Table.from_pylist
            columns = dict(zip(self._names, zip(*self._buf)))
            self._writer.write_table(pa.Table.from_pydict(columns, schema=self.schema))
            self.rows += len(self._buf)
            self._buf = []

    def close(self) -> None:
        self._flush()
        self._writer.close()

    def __enter__(self) -> "ParquetSink":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def iter_rows(path: str | Path, columns: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """Rows of a Parquet file as dicts, one record batch at a time."""
    pf = pq.ParquetFile(path)
    for batch in pf.iter_batches(batch_size=BATCH_ROWS, columns=columns):
        yield from batch.to_pylist()


def iter_tuples(path: str | Path, columns: list[str]) -> Iterator[tuple[Any, ...]]:
    """Rows of a Parquet file as tuples in `columns` order, one record batch at a time: half the
    cost of dicts for a reader that unpacks them anyway."""
    pf = pq.ParquetFile(path)
    for batch in pf.iter_batches(batch_size=BATCH_ROWS, columns=columns):
        yield from zip(*(batch.column(name).to_pylist() for name in columns))
