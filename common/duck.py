"""SQL text for DuckDB queries over our files: literals quoted once, here."""
from __future__ import annotations

from pathlib import Path


def sql_str(value: str) -> str:
    """A DuckDB string literal."""
    return "'" + value.replace("'", "''") + "'"


def sql_path(path: Path) -> str:
    """A file's path as a DuckDB string literal (read_parquet(...))."""
    return sql_str(str(path))
