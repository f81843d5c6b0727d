"""What each local Dask worker runs as it starts (Dask's `distributed.worker.preload`, set in
flows/process.py::LOCAL_WORKER_CONFIG): the process settings an `express` command gives itself."""
from __future__ import annotations

from typing import Any

from flows.process import collect_less


def dask_setup(worker: Any) -> None:
    collect_less()
