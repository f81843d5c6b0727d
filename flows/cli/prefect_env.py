"""Settings a command needs before Prefect and pyarrow are imported, inherited by the local Dask
workers it spawns: no analytics calls, patient start-up, and Arrow's jemalloc pool."""
from __future__ import annotations

import os

DEFAULTS = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    # pyarrow's default (mimalloc) keeps what a build's Parquet reads and writes freed: a 1M-post
    # 2-worker build peaked 100-120 MB higher with it, at the same speed (bench/README.md)
    "ARROW_DEFAULT_MEMORY_POOL": "jemalloc",
}


def configure() -> None:
    for key, value in DEFAULTS.items():
        os.environ.setdefault(key, value)
