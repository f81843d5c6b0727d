"""The quality gate: compute the checked tables with DuckDB, let GX validate them, keep the results.

Cross-row facts (post in two splits, label shares, drift against the parent release) are
computed here as columns/tables, so that GX checks them like any other value and reports the
offending rows. The vocabulary is pluggable: any set of allowed labels with a name and version.
GX validates pandas frames; the row-level tables reach it in chunks of at most `[gate] chunk_rows`
rows (results merged per expectation). Texts never reach GX or DuckDB: they are read about
`[gate] chunk_mb` at a time, their checked facts (lengths, masks, the PII found) computed as
columns, and dropped, so memory stays bounded however large the release and however long its
texts, and a release is validated in a few GX runs (each has a fixed cost whatever its size).
"""
from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Sequence
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from schemas.config import GateConfig
from schemas.expectations import load_suites, pii_check
from schemas.records import EXAMPLES, MASK
from schemas.vocabulary import Vocabulary, default_vocabulary

from warehouse.gate import gx as gx_adapter
from warehouse.gate.pii import GatePii
from warehouse.gate.result import GateResult, format_failures  # noqa: F401 (re-exported)
from warehouse.releases.stats import js_divergence, label_counts, union_sql  # noqa: F401 (the gate's, re-exported)
from warehouse.layout import GatePaths


# The gate's DuckDB holds the ids only (texts never enter it): its memory limit grows with the
# number of rows, within these bounds, and it spills to a temp directory beyond the limit.
DUCKDB_MIN_MB, DUCKDB_MAX_MB = 64, 512
DUCKDB_BYTES_PER_ROW = 128  # an id row in the GROUP BY / join / sort tables (1M rows also pass in 64 MB)
READ_ROWS = 256  # rows per Parquet read; chunks are assembled from these (or slices of them) until full
_TEXTS = ("text", "masked_text")
_LABEL_COLUMNS = ["post_id", "segment_index", "labels"]


def checked_columns(suite: dict[str, Any]) -> list[str]:
    """The release columns the gate reads for a suite of the `examples` table, in release order: the
    ones its expectations name, its id columns, and those the computed facts come from (texts,
    labels). A new release column is checked by naming it in the suite file; no code changes."""
    named = {v for e in suite["expectations"] for k, v in e["kwargs"].items() if k in ("column", "column_A", "column_B")}
    wanted = named | set(suite.get("id_columns", ())) | set(_TEXTS) | {"labels"}
    return [c for c in EXAMPLES.names if c in wanted]


_EXAMPLE_COLUMNS = checked_columns(next(s for s in load_suites() if s["table"] == "examples"))
# Per split file, in file order: the cross-row facts of each row (ids only, spillable joins and sort).
_ROW_FACTS = """
    SELECT i.n_rows_of_id, p.n_splits_of_post
    FROM read_parquet(?, file_row_number = true) e
    LEFT JOIN gx_ids i ON e.post_id = i.post_id AND e.segment_index = i.segment_index
    LEFT JOIN gx_posts p ON e.post_id = p.post_id
    ORDER BY e.file_row_number"""


def duckdb_memory_mb(rows: int) -> int:
    """The gate's DuckDB memory limit for a release of `rows` examples (it spills past this)."""
    return int(min(DUCKDB_MAX_MB, max(DUCKDB_MIN_MB, DUCKDB_MIN_MB + rows * DUCKDB_BYTES_PER_ROW / 2**20)))


class GateTables:
    """The tables the suites check. `examples` and `labels` (one row per example / label) reach GX
    in chunks of at most `chunk_rows` rows and about `chunk_mb` MB of Arrow data, read from the
    split files; texts never enter DuckDB and never all at once into pandas. Cross-row facts (id
    repeats, post in two splits) are GROUP BYs over the ids alone in an on-disk DuckDB that spills,
    streamed back in file order next to the chunks. `label_shares` and `drift` are small."""

    def __init__(self, files: dict[str, Path], parent: Counter[str] | None, chunk_rows: int, spill_dir: Path,
                 chunk_mb: float = GateConfig.chunk_mb, pii: GatePii | None = None):
        self.files, self.chunk_rows = files, max(1, chunk_rows)
        self.pii = pii  # adds the pii_in_* columns to each examples chunk
        self.chunk_bytes = max(1, int(chunk_mb * 2**20))
        self.rows = sum(pq.ParquetFile(p).metadata.num_rows for p in files.values())
        self.memory_mb = duckdb_memory_mb(self.rows)
        shutil.rmtree(spill_dir, ignore_errors=True)  # left over by a killed run
        spill_dir.mkdir(parents=True)
        self.con = duckdb.connect(str(spill_dir / "gate.duckdb"), config={
            "memory_limit": f"{self.memory_mb}MB", "threads": 1, "temp_directory": str(spill_dir / "tmp"),
            "preserve_insertion_order": False})  # row order comes from file_row_number, not from insertion
        self.con.execute(f"CREATE TEMP VIEW ex AS {union_sql(files)}")
        self.con.execute("CREATE TABLE gx_ids AS SELECT post_id, segment_index, count(*) AS n_rows_of_id "
                         "FROM ex GROUP BY post_id, segment_index")
        self.con.execute("CREATE TABLE gx_posts AS SELECT post_id, count(*) AS n_splits_of_post "
                         "FROM (SELECT DISTINCT post_id, split FROM ex) GROUP BY post_id")
        rows = self.con.execute("SELECT label, count(*) FROM (SELECT unnest(labels) AS label FROM ex) "
                                "GROUP BY label").fetchall()
        self.n_masks = sum(int(n) for _, n in rows)
        counts = Counter({str(label): int(n) for label, n in rows if label is not None})
        total = sum(counts.values()) or 1
        self.small = {
            "label_shares": pd.DataFrame({"label": list(counts), "count": list(counts.values()),
                                          "share": [n / total for n in counts.values()]}),
            "drift": pd.DataFrame({"label_js_divergence": [js_divergence(counts, parent) if parent is not None else None]},
                                  dtype="float64"),
        }
        self.chunk_counts: dict[str, int] = {}
        self.text_reads = 0  # pieces of about chunk_bytes the examples' texts were read in

    def chunks(self, name: str) -> Iterator[pd.DataFrame]:
        """The table `name` as one or more DataFrames (always at least one, maybe empty), in file order."""
        if name in self.small:
            yield self.small[name]
            return
        n, examples = 0, name == "examples"
        for frame in self._frames(examples):
            if len(frame) or not n:
                n += 1
                yield frame
        if not n:  # no rows at all: GX still gets the (empty) table
            n = 1
            empty = EXAMPLES.empty_table()
            no_facts = pa.table({"n_rows_of_id": pa.array([], pa.int64()), "n_splits_of_post": pa.array([], pa.int64())})
            if name == "examples":
                yield _frame([_checked_facts(empty, no_facts, "", self.pii)], examples=True)
            else:
                yield _label_rows(empty, "").to_pandas()
        self.chunk_counts[name] = n

    def _frames(self, examples: bool) -> Iterator[pd.DataFrame]:
        """The rows GX checks, gathered across the split files up to `chunk_rows` (every GX run has
        a fixed cost whatever its size): for examples, their checked facts without the texts (read
        `chunk_bytes` at a time); label rows (ids and a label) as they are."""
        held: list[pa.Table] = []
        rows = 0
        for split, path in self.files.items():
            for table, facts in self._split_chunks(path, examples):
                part = _checked_facts(table, facts, split, self.pii) if examples else _label_rows(table, split)
                if held and rows + len(part) > self.chunk_rows:
                    yield _frame(held, examples)
                    held, rows = [], 0
                held.append(part)
                rows += len(part)
                self.text_reads += examples
        if held:
            yield _frame(held, examples)

    def _split_chunks(self, path: Path, examples: bool) -> Iterator[tuple[pa.Table, pa.Table | None]]:
        """(rows, their cross-row facts for `examples`) of one split file, chunk by chunk: a chunk
        closes at `chunk_rows` rows or `chunk_bytes` of Arrow data, so long texts make smaller chunks."""
        columns = _EXAMPLE_COLUMNS if examples else _LABEL_COLUMNS
        facts = None
        if examples:  # a cursor of its own: another query on the connection would end this stream
            facts = _Rows(self.con.cursor().execute(_ROW_FACTS, [str(path)]).to_arrow_reader(READ_ROWS))
        batches: list[pa.RecordBatch] = []
        rows = size = 0
        for batch in pq.ParquetFile(path).iter_batches(batch_size=min(READ_ROWS, self.chunk_rows), columns=columns):
            while len(batch):
                row_bytes = batch.nbytes / len(batch)  # a chunk closes within a row of chunk_bytes
                fits = max(1, int((self.chunk_bytes - size) // row_bytes) if row_bytes else len(batch))
                take = min(len(batch), self.chunk_rows - rows, fits)
                part, batch = batch.slice(0, take), batch.slice(take)
                batches.append(part)
                rows, size = rows + len(part), size + part.nbytes
                if rows >= self.chunk_rows or size >= self.chunk_bytes:
                    yield pa.Table.from_batches(batches), facts.take(rows) if facts else None
                    batches, rows, size = [], 0, 0
        if batches:
            yield pa.Table.from_batches(batches), facts.take(rows) if facts else None

    def names(self) -> set[str]:
        return {"examples", "labels", *self.small}

    def close(self) -> None:
        self.con.close()


class _Rows:
    """Exactly `n` rows at a time from a record batch reader (DuckDB streams batches of its own size)."""

    def __init__(self, reader: pa.RecordBatchReader):
        self.reader, self.buffer = reader, []

    def take(self, n: int) -> pa.Table:
        have = sum(len(b) for b in self.buffer)
        while have < n:
            batch = self.reader.read_next_batch()
            self.buffer.append(batch)
            have += len(batch)
        table = pa.Table.from_batches(self.buffer, schema=self.reader.schema)
        out, rest = table.slice(0, n), table.slice(n)
        self.buffer = rest.to_batches()
        return out


# strings stay in Arrow buffers (no Python object per row)
_STRINGS_IN_ARROW = {pa.string(): pd.ArrowDtype(pa.string()), pa.large_string(): pd.ArrowDtype(pa.large_string())}


def _checked_facts(t: pa.Table, facts: pa.Table, split: str, pii: GatePii | None) -> pa.Table:
    """Rows of the `examples` table as GX sees them: the stored columns but the texts, and the
    computed ones the suite checks (the texts' lengths, masks and PII among them)."""
    t, n = t.select(_EXAMPLE_COLUMNS), len(t)
    computed = {
        "split": pa.repeat(pa.scalar(split, pa.string()), n),
        "n_mask_tokens": pc.count_substring(t.column("masked_text"), MASK),
        "n_labels": pc.list_value_length(t.column("labels")),
        "text_chars": pc.utf8_length(t.column("text")),
        "masked_text_chars": pc.utf8_length(t.column("masked_text")),
        "n_splits_of_post": facts.column("n_splits_of_post"),
        "n_rows_of_id": facts.column("n_rows_of_id"),
    }
    for name, column in computed.items():
        t = t.append_column(name, column.cast(pa.int64()) if name != "split" else column)
    if pii is not None:
        for name, found in pii.columns(t).items():
            t = t.append_column(name, pa.array(found, pa.string()))
    return t.drop_columns(list(_TEXTS))


def _frame(parts: list[pa.Table], examples: bool) -> pd.DataFrame:
    t = pa.concat_tables(parts)
    if not examples:
        return t.to_pandas()
    frame = t.to_pandas(types_mapper=_STRINGS_IN_ARROW.get)
    frame["labels"] = pd.Series(_hashable(t.column("labels")), index=frame.index, dtype="object")
    return frame


def _hashable(labels: pa.ChunkedArray) -> list[tuple[str, ...] | None]:
    """Label lists as tuples: GX fingerprints each batch with pandas' hash and, when a column holds
    arrays (to_pandas' lists), falls back to pickling the whole chunk, a copy of all its texts."""
    return [None if x is None else tuple(x) for x in labels.to_pylist()]


def _label_rows(t: pa.Table, split: str) -> pa.Table:
    """Rows of the `labels` table: a row per label occurrence, with its example's ids."""
    labels = t.column("labels").combine_chunks()
    parents = pc.list_parent_indices(labels)
    return pa.table({
        "post_id": t.column("post_id").take(parents),
        "segment_index": t.column("segment_index").take(parents),
        "split": pa.repeat(pa.scalar(split, pa.string()), len(parents)),
        "label": pc.list_flatten(labels),
    })


def run_gate(
    files: dict[str, Path],
    cfg: GateConfig,
    out_dir: Path,
    vocabulary: Vocabulary | None = None,
    parent: tuple[str, Counter[str]] | None = None,
    pii_kinds: tuple[str, ...] | None = None,
    pii_prescans: Sequence[Path] = (),
) -> GateResult:
    """Validate the split files; write GX results (and Data Docs, as `cfg.data_docs` says) under
    out_dir; never raises on failure."""
    vocab = vocabulary or default_vocabulary()
    suites = load_suites()
    pii = GatePii(pii_check(), pii_kinds, files, pii_prescans)  # the kinds the recipe scrubbed (None = all)
    out_dir.mkdir(parents=True, exist_ok=True)
    tables = GateTables(files, parent[1] if parent else None, cfg.chunk_rows, GatePaths(out_dir).spill, cfg.chunk_mb, pii)
    try:
        return _validate(tables, cfg, out_dir, vocab, suites, pii, parent)
    finally:
        tables.close()
        shutil.rmtree(GatePaths(out_dir).spill, ignore_errors=True)


def _validate(tables: GateTables, cfg: GateConfig, out_dir: Path, vocab: Vocabulary, suites: list[dict[str, Any]],
              pii: GatePii, parent: tuple[str, Counter[str]] | None) -> GateResult:
    params = {"min_text_chars": cfg.min_text_chars, "max_text_chars": cfg.max_text_chars,
              "max_label_share": cfg.max_label_share, "max_js_divergence": cfg.max_js_divergence,
              "vocabulary": sorted(vocab.labels)}
    n_masks = tables.n_masks
    distribution = "applied"
    if n_masks < cfg.min_masks_for_distribution:  # shares of a handful of masks are noise, not drift
        params["max_label_share"], params["max_js_divergence"] = 1.0, 1.0
        distribution = f"skipped: {n_masks} masks < min_masks_for_distribution {cfg.min_masks_for_distribution}"
    gate = GatePaths(out_dir)
    docs = gate.data_docs_dir if cfg.data_docs else None
    validated = gx_adapter.validate_tables(tables.chunks, tables.names(), suites, params, cfg.examples_per_failure,
                                           docs)
    drift = tables.small["drift"]["label_js_divergence"].iloc[0]
    shares = tables.small["label_shares"]
    summary = {
        "success": validated["success"],
        "suites": [{"name": s["name"], "version": s["version"], "sha256": s["sha256"], "table": s["table"],
                    "success": s["gx"]["success"], "statistics": s["gx"]["statistics"]} for s in validated["suites"]],
        "failures": validated["failures"],
        "parameters": {k: v for k, v in params.items() if k != "vocabulary"},
        "pii": pii.describe(),
        "vocabulary": vocab.describe(),
        "parent": parent[0] if parent else None,
        "distribution_checks": distribution,
        "label_js_divergence": None if pd.isna(drift) else float(drift),
        "max_label_share": float(shares["share"].max()) if len(shares) else 0.0,
        "chunk_rows": tables.chunk_rows,
        "chunk_mb": cfg.chunk_mb,
        "chunks": dict(tables.chunk_counts),
        "text_reads": tables.text_reads,
        "duckdb_memory_mb": tables.memory_mb,
        "data_docs": str(gate.data_docs.relative_to(out_dir)) if docs is not None and gate.data_docs.exists() else None,
    }
    path = gate.results
    path.write_text(json.dumps({"summary": summary, "gx": [s["gx"] for s in validated["suites"]]},
                               indent=1, default=str) + "\n")
    gate.summary.write_text(json.dumps(summary, indent=2, default=str) + "\n")
    return GateResult(validated["success"], summary, path)
