"""The quality gate: compute the checked tables with DuckDB, let GX validate them, keep the results.

Cross-row facts (post in two splits, label shares, drift against the parent release) are
computed here as columns/tables, so that GX checks them like any other value and reports the
offending rows. The vocabulary is pluggable: any set of allowed labels with a name and version.
GX validates pandas frames; the row-level tables reach it in chunks of `[gate] chunk_rows`
(results merged per expectation), so memory stays bounded however large the release.
"""
from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterator
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from schemas.config import GateConfig
from schemas.expectations import load_suites, pii_check
from schemas.records import EXAMPLES

from warehouse import gx_adapter
from warehouse.gate_pii import GatePii


@dataclass(frozen=True)
class Vocabulary:
    """The labels a release may use, and where they came from (recorded in the manifest)."""

    name: str
    version: str
    labels: frozenset[str]

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "size": len(self.labels)}


def default_vocabulary() -> Vocabulary:
    """The canonical labels of the shipped emotion vocabulary (schemas/vocabulary)."""
    from schemas.vocabulary import default_vocabulary as canonical_vocabulary

    vocab = canonical_vocabulary()
    return Vocabulary("express-vocabulary", vocab.version, frozenset(vocab.labels))


@dataclass
class GateResult:
    success: bool
    summary: dict[str, Any]
    results_path: Path | None = None

    def message(self) -> str:
        return format_failures(self.summary["failures"])


def _sql_list(files: dict[str, Path]) -> str:
    parts = [f"SELECT *, '{split}' AS split FROM read_parquet('{str(p).replace(chr(39), chr(39) * 2)}')"
             for split, p in files.items()]
    return " UNION ALL ".join(parts)


def label_counts(files: dict[str, Path]) -> Counter[str]:
    """Label occurrences over the given split files."""
    if not files:
        return Counter()
    con = duckdb.connect()
    try:
        rows = con.execute(f"SELECT l, count(*) FROM (SELECT unnest(labels) AS l FROM ({_sql_list(files)})) "
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


DUCKDB_MEMORY = "64MB"  # the gate's DuckDB (id tables only) spills to disk beyond this
_EXAMPLE_COLUMNS = ["post_id", "segment_index", "subreddit", "text", "masked_text", "labels", "n_masks"]
_CHUNK_EXAMPLES = """
    SELECT c.post_id, c.segment_index, c.subreddit, c.text, c.masked_text, c.labels, c.n_masks, ? AS split,
           (length(c.masked_text) - length(replace(c.masked_text, '<mask>', ''))) // 6 AS n_mask_tokens,
           len(c.labels) AS n_labels, length(c.text) AS text_chars, p.n_splits_of_post, i.n_rows_of_id
    FROM (SELECT *, row_number() OVER () AS chunk_row FROM chunk) c
    LEFT JOIN gx_posts p ON c.post_id = p.post_id
    LEFT JOIN gx_ids i ON c.post_id = i.post_id AND c.segment_index = i.segment_index
    ORDER BY c.chunk_row"""
_CHUNK_LABELS = """
    SELECT post_id, segment_index, ? AS split, label FROM (
        SELECT post_id, segment_index, unnest(labels) AS label, row_number() OVER () AS chunk_row FROM chunk)
    ORDER BY chunk_row"""


class GateTables:
    """The tables the suites check. `examples` and `labels` (one row per example / label) reach GX
    in chunks of `chunk_rows`, read batch by batch from the split files; cross-row facts (id
    repeats, post in two splits) are GROUP BYs over the ids alone in a DuckDB that spills to disk,
    joined to each chunk. So the gate's memory does not grow with the release; `label_shares` and
    `drift` are small."""

    def __init__(self, files: dict[str, Path], parent: Counter[str] | None, chunk_rows: int, spill_dir: Path,
                 pii: GatePii | None = None):
        self.files, self.chunk_rows = files, max(1, chunk_rows)
        self.pii = pii  # adds the pii_in_* columns to each examples chunk
        spill_dir.mkdir(parents=True, exist_ok=True)
        self.con = duckdb.connect(config={"memory_limit": DUCKDB_MEMORY, "threads": 1, "temp_directory": str(spill_dir)})
        self.con.execute(f"CREATE TEMP VIEW ex AS {_sql_list(files)}")
        self.con.execute("CREATE TEMP TABLE gx_ids AS SELECT post_id, segment_index, count(*) AS n_rows_of_id "
                         "FROM ex GROUP BY post_id, segment_index")
        self.con.execute("CREATE TEMP TABLE gx_posts AS SELECT post_id, count(DISTINCT split) AS n_splits_of_post "
                         "FROM ex GROUP BY post_id")
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

    def chunks(self, name: str) -> Iterator[pd.DataFrame]:
        """The table `name` as one or more DataFrames (always at least one, maybe empty), in file order."""
        if name in self.small:
            yield self.small[name]
            return
        query = _CHUNK_EXAMPLES if name == "examples" else _CHUNK_LABELS
        empty = True
        for split, path in self.files.items():
            for batch in pq.ParquetFile(path).iter_batches(batch_size=self.chunk_rows, columns=_EXAMPLE_COLUMNS):
                self.con.register("chunk", pa.Table.from_batches([batch]))
                frame = self.con.execute(query, [split]).df().reset_index(drop=True)
                frame = self.pii.add_columns(frame) if self.pii and name == "examples" else frame
                self.con.unregister("chunk")
                if len(frame) or empty:
                    empty = False
                    yield frame
        if empty:  # no rows at all: GX still gets the (empty) table
            self.con.register("chunk", pa.Table.from_pylist([], schema=EXAMPLES.select(_EXAMPLE_COLUMNS)))
            frame = self.con.execute(query, [""]).df()
            yield self.pii.add_columns(frame) if self.pii and name == "examples" else frame
            self.con.unregister("chunk")

    def names(self) -> set[str]:
        return {"examples", "labels", *self.small}

    def close(self) -> None:
        self.con.close()


def run_gate(
    files: dict[str, Path],
    cfg: GateConfig,
    out_dir: Path,
    vocabulary: Vocabulary | None = None,
    parent: tuple[str, Counter[str]] | None = None,
    data_docs: bool = True,
    pii_kinds: tuple[str, ...] | None = None,
) -> GateResult:
    """Validate the split files; write GX results (and Data Docs) under out_dir; never raises on failure."""
    vocab = vocabulary or default_vocabulary()
    suites = load_suites()
    pii = GatePii(pii_check(), pii_kinds, files)  # the kinds the recipe scrubbed (None = all)
    out_dir.mkdir(parents=True, exist_ok=True)
    tables = GateTables(files, parent[1] if parent else None, cfg.chunk_rows, out_dir / "duckdb-spill", pii)
    try:
        return _validate(tables, cfg, out_dir, vocab, suites, pii, parent, data_docs)
    finally:
        tables.close()
        shutil.rmtree(out_dir / "duckdb-spill", ignore_errors=True)


def _validate(tables: GateTables, cfg: GateConfig, out_dir: Path, vocab: Vocabulary, suites: list[dict[str, Any]],
              pii: GatePii, parent: tuple[str, Counter[str]] | None, data_docs: bool) -> GateResult:
    params = {"min_text_chars": cfg.min_text_chars, "max_text_chars": cfg.max_text_chars,
              "max_label_share": cfg.max_label_share, "max_js_divergence": cfg.max_js_divergence,
              "vocabulary": sorted(vocab.labels)}
    n_masks = tables.n_masks
    distribution = "applied"
    if n_masks < cfg.min_masks_for_distribution:  # shares of a handful of masks are noise, not drift
        params["max_label_share"], params["max_js_divergence"] = 1.0, 1.0
        distribution = f"skipped: {n_masks} masks < min_masks_for_distribution {cfg.min_masks_for_distribution}"
    docs = out_dir / "data_docs" if data_docs else None
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
        "data_docs": "data_docs/index.html" if docs is not None and (docs / "index.html").exists() else None,
    }
    path = out_dir / "results.json"
    path.write_text(json.dumps({"summary": summary, "gx": [s["gx"] for s in validated["suites"]]},
                               indent=1, default=str) + "\n")
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    return GateResult(validated["success"], summary, path)


def format_failures(failures: list[dict[str, Any]]) -> str:
    """One line per failed expectation: which check, on how many rows, with examples."""
    lines = []
    for f in failures:
        if f.get("exception"):
            lines.append(f"{f['suite']}: {f['expectation']} ({f['check']}) raised: {f['exception']}")
            continue
        n, rows = f.get("unexpected_count"), f.get("rows")
        where = f"on {n} of {rows} rows" if n is not None else f"observed {f.get('observed_value')!r}"
        examples = json.dumps(f.get("examples", []), default=str)[:600]
        lines.append(f"{f['suite']}: {f['expectation']} {json.dumps(f['kwargs'], default=str)} "
                     f"({f['check']}) failed {where}; examples: {examples}")
    return "\n".join(lines)
