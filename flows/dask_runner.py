"""Where a build's shard tasks run: in this process, on local Dask workers, or on a Dask cluster
(the Prefect API they report to: flows/prefect_api.py)."""
from __future__ import annotations

import logging
import os
from typing import Any

from prefect.task_runners import ThreadPoolTaskRunner

# Dask's defaults for the local workers it spawns, changed (measured on a 50k-line extract shard):
# - MALLOC_TRIM_THRESHOLD_=65536 (Dask sets it so workers hand freed memory back at once) makes
#   glibc return and re-fault spaCy's per-batch arrays: 4.1 s -> 5.8 s (+40 %). Unset, glibc's own
#   adaptive threshold applies; peak RSS is still bounded by the shard (bench/scale.py measures it).
# - the statistical profiler samples every thread's stack every 10 ms, holding the GIL.
# - the event-loop health tick (20 ms), the memory monitors (100 ms) and the system monitor
#   (500 ms) run in every worker and, for the scheduler and nannies, in the flow process: an idle
#   2-worker cluster spent 4.7 CPU s per 30 s on them, 0.75 s at these intervals, CPU the workers
#   want on a 2-core machine (bench/README.md). The tick only feeds diagnostics; memory limits
#   are still enforced, within a second.
LOCAL_WORKER_CONFIG = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
                       "distributed.worker.profile.enabled": False,
                       "distributed.admin.tick.interval": "1s",
                       "distributed.worker.memory.monitor-interval": "1s",
                       "distributed.admin.system-monitor.interval": "2s"}


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

    dask.config.set(LOCAL_WORKER_CONFIG)  # before the cluster starts: its nannies read it when they spawn
    return DaskTaskRunner(cluster_kwargs={"n_workers": workers, "threads_per_worker": 1, "processes": True,
                                          "dashboard_address": "127.0.0.1:0", "host": "127.0.0.1"})
