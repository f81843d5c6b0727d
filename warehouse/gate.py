"""The quality gate: compute the checked tables with DuckDB, let GX validate them, keep the results.

Cross-row facts (post in two splits, label shares, drift against the parent release) are
computed here as columns/tables, so that GX checks them like any other value and reports the
offending rows. The vocabulary is pluggable: any set of allowed labels with a name and version.
GX validates pandas frames, so the checked columns of one release are held in memory (releases
are tens of thousands of rows; the raw dumps never are).
"""
from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from schemas.config import GateConfig
from schemas.expectations import load_suites, pii_patterns

from warehouse import gx_adapter


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


def gate_tables(files: dict[str, Path], parent: Counter[str] | None) -> dict[str, pd.DataFrame]:
    """The four tables the suites check: examples, labels, label_shares, drift."""
    con = duckdb.connect()
    try:
        con.execute(f"CREATE TEMP VIEW ex AS {_sql_list(files)}")
        examples = con.execute("""
            SELECT e.post_id, e.segment_index, e.subreddit, e.text, e.masked_text, e.labels, e.n_masks, e.split,
                   (length(e.masked_text) - length(replace(e.masked_text, '<mask>', ''))) // 6 AS n_mask_tokens,
                   len(e.labels) AS n_labels, length(e.text) AS text_chars, s.n AS n_splits_of_post
            FROM ex e LEFT JOIN (SELECT post_id, count(DISTINCT split) AS n FROM ex GROUP BY post_id) s
              ON e.post_id = s.post_id""").df()
        labels = con.execute("SELECT post_id, segment_index, split, unnest(labels) AS label FROM ex").df()
    finally:
        con.close()
    counts = Counter(labels["label"].dropna().astype(str))
    total = sum(counts.values()) or 1
    shares = pd.DataFrame({"label": list(counts), "count": list(counts.values()),
                           "share": [n / total for n in counts.values()]})
    drift = pd.DataFrame({"label_js_divergence": [js_divergence(counts, parent) if parent is not None else None]},
                         dtype="float64")
    return {"examples": examples, "labels": labels, "label_shares": shares, "drift": drift}


def run_gate(
    files: dict[str, Path],
    cfg: GateConfig,
    out_dir: Path,
    vocabulary: Vocabulary | None = None,
    parent: tuple[str, Counter[str]] | None = None,
    data_docs: bool = True,
) -> GateResult:
    """Validate the split files; write GX results (and Data Docs) under out_dir; never raises on failure."""
    vocab = vocabulary or default_vocabulary()
    suites = load_suites()
    patterns = pii_patterns()
    tables = gate_tables(files, parent[1] if parent else None)
    params = {"min_text_chars": cfg.min_text_chars, "max_text_chars": cfg.max_text_chars,
              "max_label_share": cfg.max_label_share, "max_js_divergence": cfg.max_js_divergence,
              "vocabulary": sorted(vocab.labels), "pii_patterns": list(patterns.values())}
    n_masks = len(tables["labels"])
    distribution = "applied"
    if n_masks < cfg.min_masks_for_distribution:  # shares of a handful of masks are noise, not drift
        params["max_label_share"], params["max_js_divergence"] = 1.0, 1.0
        distribution = f"skipped: {n_masks} masks < min_masks_for_distribution {cfg.min_masks_for_distribution}"
    out_dir.mkdir(parents=True, exist_ok=True)
    docs = out_dir / "data_docs" if data_docs else None
    validated = gx_adapter.validate_tables(tables, suites, params, cfg.examples_per_failure, docs)
    drift = tables["drift"]["label_js_divergence"].iloc[0]
    summary = {
        "success": validated["success"],
        "suites": [{"name": s["name"], "version": s["version"], "sha256": s["sha256"], "table": s["table"],
                    "success": s["gx"]["success"], "statistics": s["gx"]["statistics"]} for s in validated["suites"]],
        "failures": validated["failures"],
        "parameters": {k: v for k, v in params.items() if k not in ("vocabulary", "pii_patterns")},
        "pii_patterns": patterns,
        "vocabulary": vocab.describe(),
        "parent": parent[0] if parent else None,
        "distribution_checks": distribution,
        "label_js_divergence": None if pd.isna(drift) else float(drift),
        "max_label_share": float(tables["label_shares"]["share"].max()) if len(tables["label_shares"]) else 0.0,
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
