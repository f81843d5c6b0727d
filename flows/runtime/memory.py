"""Where a build's memory comes from (piece `jemalloc`)."""
from __future__ import annotations

import os

from flows.runtime.pieces import enabled


def allocator_defaults() -> None:
    """Before pyarrow is imported (inherited by the processes a command starts): pyarrow's default
    pool, mimalloc, keeps what a build's Parquet reads and writes freed; jemalloc returns it."""
    if enabled("jemalloc"):
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")
