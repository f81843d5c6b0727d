"""Local Dask workers' settings (pieces `dask_quiet`, `dask_no_trim`, and `gc_thresholds` through
the worker preload below). An existing cluster keeps its own."""
from __future__ import annotations

from typing import Any

from flows.runtime.collector import collect_less
from flows.runtime.pieces import enabled


def local_worker_config() -> dict[str, Any]:
    """Dask settings for the local cluster a build starts (set before its nannies spawn)."""
    config: dict[str, Any] = {}
    if enabled("gc_thresholds"):
        config["distributed.worker.preload"] = [__name__]
    if enabled("dask_no_trim"):
        # Dask's MALLOC_TRIM_THRESHOLD_ makes glibc return and re-fault spaCy's per-batch arrays;
        # unset, glibc's adaptive threshold applies and peak memory is still bounded by the shard
        config["distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_"] = None
    if enabled("dask_quiet"):
        # the statistical profiler samples every thread's stack holding the GIL; the tick and the
        # monitors only feed diagnostics (memory limits are still enforced, within a second)
        config.update({"distributed.worker.profile.enabled": False,
                       "distributed.admin.tick.interval": "1s",
                       "distributed.worker.memory.monitor-interval": "1s",
                       "distributed.admin.system-monitor.interval": "2s"})
    return config


def dask_setup(worker: Any) -> None:
    """Dask's preload hook: each local worker collects cycles as the command does."""
    collect_less()
