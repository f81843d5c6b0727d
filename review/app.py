"""The review page: a small Starlette app on 127.0.0.1. Every asset is a file of this package
(review/data/), nothing comes from a CDN."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from review.session import ReviewSession, SessionError

ASSETS = Path(__file__).resolve().parent / "data"
FILES = {"review.js": "text/javascript", "review.css": "text/css"}
HEADERS = {"Cache-Control": "no-store", "Content-Security-Policy":
           "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'"}


def create_app(session: ReviewSession) -> Starlette:
    async def page(request: Request) -> Response:
        return FileResponse(ASSETS / "review.html", media_type="text/html", headers=HEADERS)

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in FILES:
            return Response("not found", status_code=404)
        return FileResponse(ASSETS / name, media_type=FILES[name], headers=HEADERS)

    async def state(request: Request) -> Response:
        return JSONResponse(session.state(request.query_params.get("reviewer")), headers=HEADERS)

    async def decide(request: Request) -> Response:
        body = await _json(request)
        return _call(session.decide, body.get("reviewer"), body.get("item_id"), body.get("decision"))

    async def undo(request: Request) -> Response:
        body = await _json(request)
        return _call(session.undo, body.get("reviewer"))

    return Starlette(routes=[
        Route("/", page), Route("/assets/{name}", asset), Route("/api/state", state),
        Route("/api/decide", decide, methods=["POST"]), Route("/api/undo", undo, methods=["POST"]),
    ])


async def _json(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.body() or b"{}")
    except json.JSONDecodeError:
        body = None
    return body if isinstance(body, dict) else {}


def _call(fn: Any, *args: Any) -> Response:
    try:
        return JSONResponse(fn(*args), headers=HEADERS)
    except SessionError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400, headers=HEADERS)


def serve(session: ReviewSession, port: int = 8765, host: str = "127.0.0.1") -> None:
    """Run until interrupted; decisions are already in the ledger, so stopping loses nothing."""
    import uvicorn

    uvicorn.run(create_app(session), host=host, port=port, log_level="warning", access_log=False)
