"""The app the temporary Prefect API serves (flows/process.py launches it in its own process):
Prefect's own server app, with one change to how it answers when its SQLite database is busy.

Prefect's server records task-run events in the background. A request that writes while that
recorder holds the database (creating a flow run, most often) fails with "database is locked" and
is answered 503; the client then retries after 2 s, then 4 s, ... . Half the flow runs of a command
waited ~2 s that way. The lock is held for milliseconds, so here a 503 tells the client when to
retry (`Retry-After`, which Prefect's client obeys): 50 ms, doubling with each 503 in a row up to
MAX_RETRY_AFTER, back to 50 ms after any other answer. The clients of a temporary API are given
more retries (RETRIES) so that the total wait before a request fails stays as long as Prefect's.
"""
from __future__ import annotations

from typing import Any

FIRST_RETRY_AFTER = 0.05  # seconds
MAX_RETRY_AFTER = 10.0
RETRIES = 12  # PREFECT_CLIENT_MAX_RETRIES for the clients of a temporary API (Prefect's default: 5)


class RetrySoon:
    """ASGI middleware: a 503 response gets a `Retry-After` that starts short and doubles while
    503s follow each other."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.in_a_row = 0

    def retry_after(self, status: int) -> float | None:
        """The Retry-After of a response with `status` (None for any but 503), and the count of
        503s in a row updated."""
        if status != 503:
            self.in_a_row = 0
            return None
        seconds = min(FIRST_RETRY_AFTER * 2 ** self.in_a_row, MAX_RETRY_AFTER)
        self.in_a_row += 1
        return seconds

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_retry_after(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                seconds = self.retry_after(message["status"])
                if seconds is not None:
                    headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"retry-after"]
                    message = {**message, "headers": [*headers, (b"retry-after", f"{seconds:g}".encode())]}
            await send(message)

        await self.app(scope, receive, send_with_retry_after)


def create_app() -> RetrySoon:
    """uvicorn's factory: Prefect's API app (it reads its "ephemeral" flags from the environment)."""
    from prefect.server.api.server import create_app as prefect_app

    return RetrySoon(prefect_app())
