"""Piece `retry_soon`: the temporary API's app (flows/prefect_api.py) with one change to how it
answers when its SQLite database is busy.

Prefect's server records task-run events in the background. A request that writes while that
recorder holds the database (creating a flow run, most often) fails with "database is locked" and
is answered 503; the client then retries after 2 s, then 4 s, ... (Prefect's backoff): many flow runs
of a command waited so. The lock is held for milliseconds, so here a 503 tells the client when to
retry (`Retry-After`, which Prefect's client obeys): after BUSY_FACTOR times as long as the
database has been busy so far (since the first 503 with no other answer between), at least
FIRST_RETRY_AFTER and at most MAX_RETRY_AFTER. A client retrying alone so waits about four times
as long each time (a request still fails after Prefect's 5 retries, sooner than under Prefect's own
backoff), and many clients meeting one short lock do not push each other's waits up.
"""
from __future__ import annotations

import time
from typing import Any

FIRST_RETRY_AFTER = 0.05  # seconds
MAX_RETRY_AFTER = 10.0
BUSY_FACTOR = 3.0


class RetrySoon:
    """ASGI middleware: a 503 response gets a `Retry-After` that grows with how long the database
    has been busy."""

    def __init__(self, app: Any, clock: Any = time.monotonic) -> None:
        self.app, self.clock = app, clock
        self.busy_since: float | None = None  # the first 503 with no other answer after it

    def retry_after(self, status: int) -> float | None:
        """The Retry-After of a response with `status` (None for any but 503)."""
        if status != 503:
            self.busy_since = None
            return None
        now = self.clock()
        if self.busy_since is None:
            self.busy_since = now
        return min(max(BUSY_FACTOR * (now - self.busy_since), FIRST_RETRY_AFTER), MAX_RETRY_AFTER)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_retry_after(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                seconds = self.retry_after(message["status"])
                if seconds is not None:
                    headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"retry-after"]
                    message = {**message, "headers": [*headers, (b"retry-after", f"{seconds:.3f}".encode())]}
            await send(message)

        await self.app(scope, receive, send_with_retry_after)


APP = "flows.runtime.retry_soon:create_app"


def create_app() -> RetrySoon:
    """uvicorn's factory: the temporary API's app, wrapped."""
    from flows.prefect_api import create_app as temporary_app

    return RetrySoon(temporary_app())
