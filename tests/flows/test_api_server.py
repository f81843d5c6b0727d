"""The temporary API's app (flows/api_server.py): a 503 asks for a short wait that doubles while
503s follow each other, up to a bound, and starts short again after any other answer."""
import asyncio

from flows.api_server import FIRST_RETRY_AFTER, MAX_RETRY_AFTER, RetrySoon


def _answers(statuses):
    """The Retry-After header (or None) of each response of an app answering `statuses` in turn."""
    left = list(statuses)

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": left.pop(0), "headers": [(b"retry-after", b"2")]})
        await send({"type": "http.response.body", "body": b""})

    wrapped, seen = RetrySoon(app), []

    async def send(message):
        if message["type"] == "http.response.start":
            seen.append(dict(message["headers"]).get(b"retry-after"))

    for _ in statuses:
        asyncio.run(wrapped({"type": "http"}, None, send))
    return seen


def test_a_503_asks_for_a_short_wait_that_doubles_in_a_row_and_resets_after_a_success():
    first = FIRST_RETRY_AFTER
    assert _answers([503, 503, 503, 200, 503]) == [
        f"{first:g}".encode(), f"{2 * first:g}".encode(), f"{4 * first:g}".encode(), b"2", f"{first:g}".encode()]


def test_the_wait_is_bounded():
    assert _answers([503] * 20)[-1] == f"{MAX_RETRY_AFTER:g}".encode()


def test_other_scopes_reach_the_app_untouched():
    seen = []

    async def app(scope, receive, send):
        seen.append(scope["type"])

    asyncio.run(RetrySoon(app)({"type": "lifespan"}, None, None))
    assert seen == ["lifespan"]
