"""Settings a command needs before Prefect and pyarrow are imported, inherited by the local Dask
workers it spawns: no analytics calls, patient start-up, and Arrow's jemalloc pool; and, for a
command that runs flows, the Prefect API they use."""
from __future__ import annotations

import os
from collections.abc import Callable

DEFAULTS = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    # pyarrow's default (mimalloc) keeps what a build's Parquet reads and writes freed: a 1M-post
    # 2-worker build peaked 100-120 MB higher with it, at the same speed (bench/README.md)
    "ARROW_DEFAULT_MEMORY_POOL": "jemalloc",
}


def configure(temporary_api: bool = False, while_starting: Callable[[], object] | None = None) -> None:
    """Set the defaults (a variable already set wins). `temporary_api`: the command runs flows, so
    without a configured Prefect API it starts the temporary one for itself and its local workers,
    calling `while_starting` meanwhile (flows/prefect_api.py). A command serving a lasting
    deployment (`express schedule`) keeps the user's server instead."""
    for key, value in DEFAULTS.items():
        os.environ.setdefault(key, value)
    if temporary_api:
        from flows.prefect_api import share_temporary_api

        share_temporary_api(while_starting)
