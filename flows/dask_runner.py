"""Where a build's shard tasks run: in this process, on local Dask workers, or on a Dask cluster
(the local workers' settings: flows/runtime/dask_workers.py; the API they report to:
flows/prefect_api.py)."""
from __future__ import annotations

import logging
import os
from typing import Any

from prefect.task_runners import ThreadPoolTaskRunner

from flows.runtime import local_worker_config


def task_runner(workers: int = 2, address: str | None = None) -> Any:
    """Dask through prefect-dask: an existing cluster at `address`, else a local one with `workers`
    single-threaded worker processes; workers=0 runs tasks one at a time in this process."""
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")  # inherited by local workers
    logging.getLogger("distributed").setLevel(logging.WARNING)  # progress lines stay readable
    if address:
        from prefect_dask import DaskTaskRunner

        return DaskTaskRunner(address=address)
    if workers <= 0:
        return ThreadPoolTaskRunner(max_workers=1)
    import dask
    from prefect_dask import DaskTaskRunner

    dask.config.set(local_worker_config())  # before the cluster starts: its nannies read it when they spawn
    return DaskTaskRunner(cluster_kwargs={"n_workers": workers, "threads_per_worker": 1, "processes": True,
                                          "dashboard_address": "127.0.0.1:0", "host": "127.0.0.1"})
