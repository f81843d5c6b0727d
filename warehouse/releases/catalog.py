"""DuckDB catalog: one view per release and split over the published Parquet files.

Views read the files where they are (no copy), so DuckDB queries always see the release
exactly as published. `<dataset>_latest_<split>` views point at the newest release. A view names
its files relative to the warehouse folder, so a warehouse moved or copied elsewhere reads its own
files: `connect` opens the catalog with DuckDB's `file_search_path` set to the warehouse (from
DuckDB itself: `SET file_search_path = '<warehouse>'` first).
"""
from __future__ import annotations

import re
from pathlib import Path

import duckdb

from warehouse.layout import Warehouse


def connect(warehouse: Warehouse | str | Path | None = None, read_only: bool = True) -> duckdb.DuckDBPyConnection:
    """The warehouse's catalog, its views reading this warehouse's files wherever it now lies."""
    wh = warehouse if isinstance(warehouse, Warehouse) else Warehouse.at(warehouse)
    con = duckdb.connect(str(wh.catalog), read_only=read_only)
    con.execute(f"SET file_search_path = '{_quoted(str(wh.root))}'")
    return con


def _quoted(text: str) -> str:
    return text.replace("'", "''")


def view_name(dataset: str, version: str, split: str) -> str:
    return re.sub(r"[^0-9a-zA-Z_]", "_", f"{dataset}_{version}_{split}")


def register_release(warehouse: Warehouse, dataset: str, version: str, files: dict[str, Path],
                     latest: bool = True) -> list[str]:
    """Create (or replace) the views of one release, and (unless `latest=False`) repoint the
    `latest` views at it."""
    names = []
    con = connect(warehouse, read_only=False)
    try:
        for split, path in files.items():
            literal = _quoted(Path(path).resolve().relative_to(warehouse.root).as_posix())
            targets = (version, "latest") if latest else (version,)
            for name in (view_name(dataset, v, split) for v in targets):
                con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet('{literal}')")
            names.append(view_name(dataset, version, split))
    finally:
        con.close()
    return names


def list_views(warehouse: Warehouse) -> list[str]:
    if not warehouse.catalog.exists():
        return []
    con = connect(warehouse)
    try:
        rows = con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY view_name").fetchall()
    finally:
        con.close()
    return [r[0] for r in rows]


def drop_release(warehouse: Warehouse, dataset: str, version: str) -> list[str]:
    """Drop the views of one release (its files were purged); the `latest` views are left alone."""
    prefix = view_name(dataset, version, "")
    names = [v for v in list_views(warehouse) if v.startswith(prefix)]
    if not names:
        return []
    con = duckdb.connect(str(warehouse.catalog))
    try:
        for name in names:
            con.execute(f"DROP VIEW IF EXISTS {name}")
    finally:
        con.close()
    return names
