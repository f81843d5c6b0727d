"""How the temporary Prefect API and its flow runs are tuned (pieces `retry_soon`, `no_heartbeats`);
flows/prefect_api.py starts the API itself."""
from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

from flows import prefect_api
from flows.runtime import retry_soon
from flows.runtime.pieces import enabled


def server_app() -> str:
    """The app the temporary API serves."""
    return retry_soon.APP if enabled("retry_soon") else prefect_api.APP


def without_heartbeats() -> AbstractContextManager[Any]:
    """Flow runs under a temporary API send no heartbeats: Prefect beats from a thread that sleeps
    in 1 s steps and is joined when the run ends. The beats feed a lasting server's detection of
    crashed runs; a temporary API ends minutes after its last command. A user's API keeps them."""
    if not (enabled("no_heartbeats") and prefect_api.is_temporary()):
        return nullcontext()
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    return temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None})
