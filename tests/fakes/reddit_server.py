"""A fake Reddit API on 127.0.0.1 for real praw: OAuth token, listings, search, comments, and
`/api/info` by fullname (what it no longer serves is left out, as Reddit leaves out what it lost).

It pages like Reddit (`limit`, `after`, a `before`-less cursor), records every request, and can be
told to refuse the app's credentials at the token endpoint (`reject_credentials`: 401, as Reddit
answers a wrong client id or secret), to answer the next listing requests with given error statuses
(e.g. one 429, one 500, a 403 of a private subreddit, a 404; a 429 carries
`Retry-After: <retry_after>` unless that is None), to answer each API request only after
`delay` seconds, or to hold API request number `stall_at` until `release` is set (so a test can kill
a client at a known point).

Texts are served as Reddit serves them: `title`, `selftext` and `body` hold what the author typed
(Markdown) and are HTML-escaped (`&`, `<`, `>`) unless the request asks for `raw_json=1`, as praw does.
"""
from __future__ import annotations

import html
import json
import socket
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

TOKEN = "fake-access-token"


TEXT_FIELDS = ("title", "selftext", "body")


def escaped(item: dict[str, Any]) -> dict[str, Any]:
    """An item as Reddit's JSON carries it without raw_json=1: `&`, `<` and `>` of its texts escaped."""
    return {k: html.escape(v, quote=False) if k in TEXT_FIELDS and isinstance(v, str) else v for k, v in item.items()}


def listing(children: list[dict[str, Any]], kind: str, after: str | None) -> dict[str, Any]:
    return {"kind": "Listing", "data": {"after": after, "before": None, "dist": len(children),
                                        "children": [{"kind": kind, "data": c} for c in children]}}


class FakeReddit:
    """Serves `submissions` (dicts in Reddit's JSON shape) and `comments` (submission id -> list)."""

    def __init__(self, submissions: list[dict[str, Any]], comments: dict[str, list[dict[str, Any]]] | None = None,
                 page_size: int = 100) -> None:
        self.submissions = submissions
        self.comments = comments or {}
        self.page_size = page_size
        self.fail_next: list[int] = []  # statuses for the next API requests, in order
        self.fail_on: dict[int, int] = {}  # 1-based API request number -> status to answer it with
        self.api_calls = 0
        self.requests: list[dict[str, Any]] = []
        self.errors_served: list[int] = []
        self.retry_after: str | None = "1"
        self.reject_credentials = False
        self.delay = 0.0
        self.stall_at: int | None = None
        self.stalled, self.release = threading.Event(), threading.Event()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> "FakeReddit":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()

    # --- request handling -------------------------------------------------------------
    def _page(self, items: list[dict[str, Any]], params: dict[str, str]) -> dict[str, Any]:
        limit = min(int(params.get("limit", 25)), self.page_size)
        start = 0
        if after := params.get("after"):
            ids = [f"t3_{s['id']}" for s in items]
            start = ids.index(after) + 1 if after in ids else len(items)
        page = items[start:start + limit]
        more = start + limit < len(items)
        return listing(page, "t3", f"t3_{page[-1]['id']}" if page and more else None)

    def _select(self, sub: str, params: dict[str, str], search: bool) -> list[dict[str, Any]]:
        items = [s for s in self.submissions if sub == "all" or s.get("subreddit", "").lower() == sub.lower()]
        if search:
            q = params.get("q", "").lower()
            items = [s for s in items if q in (s.get("title", "") + " " + s.get("selftext", "")).lower()]
        if params.get("sort", "new") == "new":
            items = sorted(items, key=lambda s: -int(s.get("created_utc", 0)))
        return items

    def _info(self, names: list[str]) -> dict[str, Any]:
        known = {f"t3_{s['id']}": ("t3", s) for s in self.submissions}
        known |= {f"t1_{c['id']}": ("t1", c) for cs in self.comments.values() for c in cs}
        found = [known[n] for n in names if n in known]
        return {"kind": "Listing", "data": {"after": None, "before": None, "dist": len(found),
                                            "children": [{"kind": kind, "data": data} for kind, data in found]}}

    def route(self, method: str, path: str, params: dict[str, str]) -> tuple[int, Any]:
        parts = [p for p in path.strip("/").removesuffix(".json").split("/") if p]
        if method == "POST" and parts == ["api", "v1", "access_token"]:
            if self.reject_credentials:
                return 401, {"message": "Unauthorized", "error": 401}
            return 200, {"access_token": TOKEN, "token_type": "bearer", "expires_in": 3600, "scope": "*"}
        with self._lock:
            self.api_calls += 1
            call = self.api_calls
            status = self.fail_on.pop(call, None) or (self.fail_next.pop(0) if self.fail_next else None)
            if status:
                self.errors_served.append(status)
                return status, {"message": "fake failure", "error": status}
        if call == self.stall_at:
            self.stalled.set()
            self.release.wait()
        if self.delay:
            time.sleep(self.delay)
        shape = (lambda item: item) if params.get("raw_json") == "1" else escaped
        if len(parts) == 3 and parts[0] == "r" and parts[2] in ("search", "new", "hot", "top"):
            page = self._page(self._select(parts[1], params, parts[2] == "search"), params)
            page["data"]["children"] = [{**c, "data": shape(c["data"])} for c in page["data"]["children"]]
            return 200, page
        if parts == ["api", "info"]:  # by fullname, at most 100 a request; what Reddit no longer has is left out
            names = [n for n in params.get("id", "").split(",") if n]
            if len(names) > 100:
                return 400, {"message": "too many ids", "error": 400}
            return 200, self._info(names)
        if len(parts) >= 2 and parts[0] == "comments":
            sub = next((s for s in self.submissions if s["id"] == parts[1]), None)
            if sub is None:
                return 404, {"message": "Not Found", "error": 404}
            comments = [shape({**c, "replies": ""}) for c in self.comments.get(parts[1], [])]
            return 200, [listing([shape(sub)], "t3", None), listing(comments, "t1", None)]
        return 404, {"message": "Not Found", "error": 404}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self, method: str) -> None:
                url = urlparse(self.path)
                params = {k: v[-1] for k, v in parse_qs(url.query).items()}
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode() if length else ""
                with fake._lock:
                    fake.requests.append({"method": method, "path": url.path, "params": params,
                                          "authorization": self.headers.get("Authorization", ""), "body": body})
                status, payload = fake.route(method, url.path, params)
                data = json.dumps(payload).encode()
                try:
                    self._answer(status, data)
                except (BrokenPipeError, ConnectionResetError):  # the client was killed mid-request
                    pass

            def _answer(self, status: int, data: bytes) -> None:
                """One send with MSG_NOSIGNAL: a killed client must not SIGPIPE the test process (the CLI,
                run in-process by other tests, restores SIGPIPE's default action)."""
                phrase = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Error"
                head = [f"HTTP/1.0 {status} {phrase}", "Content-Type: application/json",
                        f"Content-Length: {len(data)}"]
                if status == 429:
                    if fake.retry_after is not None:
                        head.append(f"Retry-After: {fake.retry_after}")
                elif status == 401:
                    head.append('www-authenticate: Bearer realm="reddit", error="invalid_token"')
                else:
                    head += ["x-ratelimit-remaining: 99", "x-ratelimit-used: 1", "x-ratelimit-reset: 60"]
                self.connection.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + data, socket.MSG_NOSIGNAL)
                self.close_connection = True

            def do_GET(self) -> None:  # noqa: N802
                self._serve("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._serve("POST")

            def log_message(self, *args: Any) -> None:
                return

        return Handler
