"""Piece `retry_soon`, the temporary API's app (flows/runtime/retry_soon.py): a 503 asks the client to retry after a wait
that grows with how long the database has been busy (at least a short wait, at most a bound),
counted afresh after any other answer."""
import asyncio

from flows.runtime.retry_soon import BUSY_FACTOR, FIRST_RETRY_AFTER, MAX_RETRY_AFTER, RetrySoon


def _answers(timed_statuses):
    """The Retry-After (float, or None if absent) of each response of an app answering each
    (time, status) in turn, read at that time."""
    left = list(timed_statuses)
    now = [0.0]

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": left.pop(0)[1], "headers": [(b"retry-after", b"2")]})
        await send({"type": "http.response.body", "body": b""})

    wrapped, seen = RetrySoon(app, clock=lambda: now[0]), []

    async def send(message):
        if message["type"] == "http.response.start":
            value = dict(message["headers"]).get(b"retry-after")
            seen.append(None if value is None else float(value))

    for t, _ in timed_statuses:
        now[0] = t
        asyncio.run(wrapped({"type": "http"}, None, send))
    return seen


def test_a_503_asks_for_a_wait_growing_with_how_long_the_database_has_been_busy_afresh_after_a_success():
    seen = _answers([(10.0, 503), (10.0, 503), (10.4, 503), (11.0, 200), (12.0, 503), (13.5, 503)])
    assert seen == [FIRST_RETRY_AFTER, FIRST_RETRY_AFTER, round(BUSY_FACTOR * 0.4, 3), 2.0, FIRST_RETRY_AFTER,
                    round(BUSY_FACTOR * 1.5, 3)]


def test_the_wait_is_bounded():
    assert _answers([(0.0, 503), (100.0, 503)])[-1] == MAX_RETRY_AFTER


def test_other_scopes_reach_the_app_untouched():
    seen = []

    async def app(scope, receive, send):
        seen.append(scope["type"])

    asyncio.run(RetrySoon(app)({"type": "lifespan"}, None, None))
    assert seen == ["lifespan"]
