"""One Prefect API for a local Dask cluster's worker processes.

Without a configured API (`PREFECT_API_URL`), Prefect starts a temporary server per process; every
Dask worker would start its own. Starting one here and exporting its URL before the workers spawn
lets them all report to it. With a real `prefect server start` configured, nothing is started.
"""
from __future__ import annotations

import os


def share_temporary_api() -> str | None:
    """Start the temporary API once and export its URL to child processes; None if one is configured."""
    if os.environ.get("PREFECT_API_URL"):
        return None
    from prefect.settings import PREFECT_API_URL

    if PREFECT_API_URL.value():
        return None
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()  # the same instance Prefect's own ephemeral mode uses in this process
    server.start()
    os.environ["PREFECT_API_URL"] = server.api_url
    return server.api_url
