"""A small OpenAI-compatible chat server on 127.0.0.1 for tests: real HTTP, scripted faults.

`faults` is consumed one per request, in order: "429" (rate limited, Retry-After 0), "500",
"503" (overloaded), "401" (a bad key), "403" (a key without access to the model), "404" (no such
model), or a number of seconds to stall before answering (the client times out first).
`on_request(n)` is called with each chat request's number (1, 2, ...) before it is answered. Without a fault,
`responder(text, k, body)` writes the answer; by default a list of k words. Every request body
and Authorization header is recorded, and the most requests it held at once (`max_in_flight`);
`hold_until_in_flight = n` holds each request until n are in (at most 30 s), so a client that
sends n at once is seen sending them together.
`refuse_response_format` makes it answer 400 to any request with a response_format;
`fail_every_chat = 501` answers every chat request with that status; `models_page` answers
GET /v1/models with that HTML page (200), as a web server put where the API should be would.
"""
from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[str, int, dict[str, Any]], str]


def target_text(body: dict[str, Any]) -> str:
    """The masked text of the last user turn (after 'Text:'), where the target sits."""
    last = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    return last.split("Text:", 1)[-1].strip()


def default_responder(text: str, k: int, body: dict[str, Any]) -> str:
    return repr(["sad"] * k)


class FakeOpenAIServer:
    def __init__(self, responder: Responder = default_responder) -> None:
        self.responder = responder
        self.faults: deque[str | float] = deque()
        self.refuse_response_format = False
        self.fail_every_chat: int | None = None
        self.models_page: str | None = None
        self.on_request: Callable[[int], None] | None = None
        self.requests: list[dict[str, Any]] = []
        self.auth_headers: list[str] = []
        self.max_in_flight = 0
        self.hold_until_in_flight = 0
        self._in_flight = 0
        self._held_enough = False
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        # shutdown() waits for the serving loop's next poll: 20 ms, not the default half second
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> "FakeOpenAIServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return None

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/v1/models" and fake.models_page is not None:
                    page = fake.models_page.encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(page)))
                    self.end_headers()
                    self.wfile.write(page)
                    return
                self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with fake._lock:
                    fake.requests.append(body)
                    number = len(fake.requests)
                    fake.auth_headers.append(self.headers.get("Authorization", ""))
                    fault = fake.faults.popleft() if fake.faults else None
                    fake._in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake._in_flight)
                    if fake.hold_until_in_flight and fake._in_flight >= fake.hold_until_in_flight:
                        fake._held_enough = True
                        fake._arrived.notify_all()
                    if fake.hold_until_in_flight:
                        fake._arrived.wait_for(lambda: fake._held_enough, timeout=30)
                try:
                    if fake.on_request is not None:
                        fake.on_request(number)
                    self._answer(body, fault)
                finally:
                    with fake._lock:
                        fake._in_flight -= 1

            def _answer(self, body: dict[str, Any], fault: str | float | None) -> None:
                if fake.fail_every_chat is not None:
                    self._send(fake.fail_every_chat, {"error": {"message": "chat completions are not implemented here",
                                                                "type": "not_implemented"}})
                    return
                if fault is None and fake.refuse_response_format and "response_format" in body:
                    self._send(400, {"error": {"message": "response_format is not supported", "type": "invalid_request_error"}})
                    return
                if fault == "429":
                    self._send(429, {"error": {"message": "rate limited", "type": "rate_limit_error"}}, {"Retry-After": "0"})
                    return
                if fault in ("500", "503", "401", "403", "404"):
                    self._send(int(fault), {"error": {"message": f"scripted {fault}", "type": "server_error"}})
                    return
                if isinstance(fault, (int, float)):
                    time.sleep(fault)
                text = target_text(body)
                content = fake.responder(text, text.count("<mask>"), body)
                prompt_tokens = sum(len(re.findall(r"\S+", m["content"])) for m in body["messages"])
                completion_tokens = len(content.split())
                self._send(200, {
                    "id": f"chatcmpl-{len(fake.requests)}", "object": "chat.completion", "created": 0,
                    "model": body.get("model", "fake"),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                              "total_tokens": prompt_tokens + completion_tokens},
                })

        return Handler
