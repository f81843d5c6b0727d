"""OpenAI-compatible chat predictor (vLLM, Ollama, llama.cpp server, OpenAI) with a response cache.

Server and key come from the options or `OPENAI_BASE_URL` / `OPENAI_API_KEY`; the key is passed
to the client only (never stored, never logged). Before the first request the server is asked
for its models (a server that is down fails the run at once) and, where it tells, its slots.
Requests then run in an adaptive window (evaluation/predictors/concurrency.py), each with an answer-length
cap from its number of masks and a timeout that grows with its length. 429, the 5xx a retry may
cure (RETRIED_STATUS), timeouts and dropped connections are retried with exponential backoff; a
timeout narrows the window to one. A stop (Ctrl-C, SIGTERM) sends no request and no retry after it.
Answers are structured by default (evaluation/predictors/answers.py). Every successful response is cached
on disk by model, messages and parameters, so a repeated or interrupted run sends no request for
what is already answered; a failed one is recorded, never cached.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from common.errors import UserError
from evaluation.predictors.answers import FORMATS, response_format
from evaluation.predictors.cache import ResponseCache, cache_key
from evaluation.predictors.concurrency import AdaptiveWindow, map_until_stopped
from evaluation.predictors.base import Item, Prediction, PredictorOptions
from evaluation.predictors.prompted import PromptedPredictor

log = logging.getLogger("express.evaluation.chat")
MAX_RETRY_AFTER = 60.0
TOKENS_PER_TIMEOUT = 1000  # --timeout is for a request of this many tokens (prompt + answer)
CHARS_PER_TOKEN = 4
# What a retry may cure: a rate limit, an overloaded or restarting server or the proxy before it, a
# transient server error (OpenAI documents 500 so). Any other answer (501 Not Implemented, 505, ...)
# is the same the next time: the row fails at its first attempt.
RETRIED_STATUS = frozenset({429, 500, 502, 503, 504})
_TOO_LONG = re.compile(r"context length|context window|n_ctx|too long|maximum context|context_length_exceeded", re.I)


class RunCancelled(Exception):
    """A request of a run that has stopped is not sent (what stopped it is raised in the caller)."""


class ChatConfigError(UserError):
    """The server refused the run as configured (bad key, unknown model, wrong URL, down, a prompt
    longer than the model's context): stop, do not guess."""


def public_url(url: str) -> str:
    """The base URL without credentials or query, safe to store with a run."""
    if not url:
        return ""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


OFFERS_SHOWN = 10  # model ids a "no such model" error names


def offered_models(body: str) -> list[str] | None:
    """The model ids of a GET /models answer (`{"data": [{"id": ...}, ...]}`), or None when it holds none."""
    try:
        data = json.loads(body).get("data")
    except (ValueError, AttributeError):
        return None
    if not isinstance(data, list):
        return None
    return [str(m["id"]) for m in data if isinstance(m, dict) and m.get("id")]


def slots_from_props(props: Any) -> int | None:
    """llama.cpp's llama-server reports its parallel slots as `total_slots` at /props."""
    value = props.get("total_slots") if isinstance(props, dict) else None
    return value if isinstance(value, int) and value > 0 else None


class ChatPredictor(PromptedPredictor):
    name = "openai-compatible"

    def __init__(self, options: PredictorOptions | None = None) -> None:
        super().__init__(options)
        o = self.options
        if not o.model:
            raise ValueError("openai-compatible needs a model name (--model or [evaluate] model)")
        self.base_url = o.base_url or os.environ.get("OPENAI_BASE_URL", "")
        # Local servers accept any key; the client insists on one.
        self._api_key = o.api_key or os.environ.get(o.api_key_env or "OPENAI_API_KEY", "") or "EMPTY"
        self.cache = ResponseCache(o.cache_dir) if o.cache_dir else None
        self.spelling = FORMATS[0] if self.answers == "structured" else "free"
        self.refused: list[str] = []  # response_format spellings this server refused
        self.window: AdaptiveWindow | None = None
        self.offered: list[str] | None = None  # the model ids GET /models listed, when it listed them
        self._client: Any = None
        self._lock = threading.Lock()
        self._probe = threading.Lock()
        self._answered = threading.Event()
        self._stopped: ChatConfigError | None = None  # the first refusal: no request is sent after it
        self._cancelled = threading.Event()  # the run stopped (Ctrl-C, SIGTERM, an error): no attempt, no retry
        self.stats: Counter[str] = Counter()
        self.seconds = 0.0

    @property
    def where(self) -> str:
        return public_url(self.base_url) or "api.openai.com"

    def params(self, k: int, spelling: str) -> dict[str, Any]:
        """Sampling parameters of one request: part of its cache key."""
        fmt = response_format(spelling, k, self.setting.reasoning)
        max_tokens = self.max_tokens(k)
        return {"temperature": self.options.temperature, **({"max_tokens": max_tokens} if max_tokens else {}),
                **({"response_format": fmt} if fmt else {})}

    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                from openai import OpenAI

                self._client = OpenAI(base_url=self.base_url or None, api_key=self._api_key,
                                      timeout=self.options.timeout, max_retries=0)
            return self._client

    def connect(self) -> AdaptiveWindow:
        """Once per run: the server must answer; its slot count, if it gives one, sizes the window."""
        if self.window is None:
            import httpx
            import openai

            try:
                listed = self.client().models.with_raw_response.list()
            except openai.APIConnectionError as exc:
                raise ChatConfigError(f"cannot reach the server at {self.where}: {exc.__cause__ or exc}") from None
            except openai.APIStatusError as exc:  # it answered: up, whatever it thinks of the request
                self._check_status(exc)
            else:
                kind = listed.headers.get("content-type", "")
                if "json" not in kind:  # a web page, a proxy's sign-in: no API answers so
                    raise ChatConfigError(f"{self.where} is not an OpenAI-compatible API: GET {self.where}/models "
                                          f"answered {listed.status_code} with {kind or 'no content type'}, not JSON "
                                          f"(a server's base URL usually ends in /v1)") from None
                self.offered = offered_models(listed.http_response.text)
            root = self.base_url.rstrip("/").removesuffix("/v1") if self.base_url else ""
            slots = None
            if root:
                try:
                    resp = httpx.get(root + "/props", timeout=5.0)
                    slots = slots_from_props(resp.json()) if resp.status_code == 200 else None
                except (httpx.HTTPError, ValueError):
                    slots = None
            self.window = AdaptiveWindow(self.options.concurrency, slots)
        return self.window

    def _check_status(self, exc: Any) -> None:
        if exc.status_code in (401, 403, 404):
            offers = ""
            if exc.status_code == 404 and self.offered is not None:
                shown = ", ".join(f"'{m}'" for m in self.offered[:OFFERS_SHOWN])
                more = f" and {len(self.offered) - OFFERS_SHOWN} more" if len(self.offered) > OFFERS_SHOWN else ""
                offers = f"; it offers {shown}{more} (GET {self.where}/models)" if shown else "; it lists no model"
            raise ChatConfigError(f"server {self.where} answered {exc.status_code} for model "
                                  f"'{self.options.model}'{offers}") from None

    def _count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self.stats[key] += n

    def timeout_for(self, messages: list[dict[str, str]], max_tokens: int, timeouts: int) -> float:
        """--timeout per 1,000 tokens of prompt and answer, times the requests ahead of it, doubled per timeout."""
        tokens = sum(len(m["content"]) for m in messages) / CHARS_PER_TOKEN + (max_tokens or 256)
        window = self.window.queue_factor if self.window else 1
        return self.options.timeout * max(1.0, tokens / TOKENS_PER_TIMEOUT) * window * 2 ** timeouts

    @contextlib.contextmanager
    def _first_alone(self) -> Iterator[None]:
        """Until the server has answered once, one request at a time (unless the user named a
        number): the first finds out which response_format the server takes, no other is refused
        meanwhile."""
        if self._answered.is_set() or (self.window is not None and self.window.fixed):
            yield
            return
        with self._probe:
            yield

    def _refused_format(self, exc: Any, spelling: str) -> bool:
        """The server refused the response_format `spelling`: the run takes the next one, once, visibly."""
        if spelling == "free" or exc.status_code not in (400, 415, 422, 500, 501) or \
                not re.search(r"response_format|json_schema|json_object|schema", str(exc.message), re.I):
            return False
        with self._lock:
            if spelling not in self.refused:
                self.refused.append(spelling)
                self.spelling = FORMATS[FORMATS.index(spelling) + 1]
                then = "free text" if self.spelling == "free" else f"response_format '{self.spelling}'"
                print(f"[evaluate] {self.where} refused response_format '{spelling}' ({exc.status_code}); "
                      f"now asking with {then}", file=sys.stderr, flush=True)
        return True

    def request(self, messages: list[dict[str, str]], k: int) -> Prediction:
        """One answer: from the cache, else from the server with retries; failures are recorded, not cached.
        A ChatConfigError ends the run: the requests of other rows that were waiting are not sent."""
        try:
            return self._request(messages, k)
        except ChatConfigError as exc:
            with self._lock:
                self._stopped = self._stopped or exc
            raise

    def _check_stopped(self) -> None:
        if self._stopped is not None:
            raise ChatConfigError(str(self._stopped))
        if self._cancelled.is_set():
            raise RunCancelled("the run stopped")

    def _request(self, messages: list[dict[str, str]], k: int) -> Prediction:
        import openai

        window = self.connect()
        timeouts = 0
        attempt = 0
        while True:
            self._check_stopped()
            spelling = self.spelling
            params = self.params(k, spelling)
            key = cache_key(self.options.model, messages, params)
            if (hit := self._cached(messages, k, spelling)) is not None:
                self._count("cache_hits")
                return Prediction(hit["content"], usage=hit.get("usage"), cached=True)
            try:
                with window, self._first_alone():
                    self._check_stopped()  # another row's request was refused while this one waited
                    if spelling != self.spelling:  # refused while this request waited for its turn
                        continue
                    self._count("requests")
                    resp = self.client().chat.completions.create(
                        model=self.options.model, messages=messages,
                        timeout=self.timeout_for(messages, params.get("max_tokens", 0), timeouts), **params)
                    self._answered.set()
            except (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError) as exc:
                if isinstance(exc, openai.InternalServerError) and self._refused_format(exc, spelling):
                    continue
                if isinstance(exc, openai.APIStatusError) and exc.status_code not in RETRIED_STATUS:
                    self._count("failed")  # the same answer the next time: no retry
                    return Prediction(None, error=f"{exc.status_code} after {attempt + 1} attempts: "
                                                  f"{str(exc.message)[:200]}")
                if isinstance(exc, openai.APITimeoutError):
                    timeouts += 1
                    window.timed_out()
                    self._count("timeouts")
                status = getattr(exc, "status_code", None) or type(exc).__name__
                if attempt == self.options.max_retries:
                    if isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError):
                        raise ChatConfigError(f"the server at {self.where} went away: {status} after "
                                              f"{attempt + 1} attempts") from None
                    self._count("failed")
                    said = f": {str(exc.message)[:200]}" if isinstance(exc, openai.APIStatusError) else ""
                    return Prediction(None, error=f"{status} after {attempt + 1} attempts{said}")
                delay = self._delay(exc, attempt)
                log.warning("request failed (%s); retry %d/%d in %.2fs", status, attempt + 1, self.options.max_retries, delay)
                self._count("retries")
                attempt += 1
                self._cancelled.wait(delay)  # a stop ends the wait: the loop's check raises it
                continue
            except openai.APIStatusError as exc:
                self._check_status(exc)
                if self._refused_format(exc, spelling):
                    continue
                if exc.status_code == 400 and _TOO_LONG.search(str(exc.message)):
                    raise ChatConfigError(f"a {self.setting.name} prompt is longer than the context of "
                                          f"'{self.options.model}' at {self.where} ({str(exc.message)[:300]}); nothing "
                                          f"was truncated: use fewer few-shot examples, a server with a longer "
                                          f"context, or another model") from None
                self._count("failed")
                return Prediction(None, error=f"{exc.status_code}: {str(exc.message)[:200]}")
            window.finished(resp.usage.total_tokens if resp.usage else 1)
            return self._answer(resp, key)

    def _cached(self, messages: list[dict[str, str]], k: int, spelling: str) -> dict[str, Any] | None:
        """A cached answer in this spelling or, for structured answers, a later one this server was
        answered in before (a rerun then does not ask again what the server refused last time)."""
        if self.cache is None:
            return None
        later = [spelling] if spelling == "free" else [s for s in FORMATS[FORMATS.index(spelling):] if s != "free"]
        for candidate in later:
            hit = self.cache.get(cache_key(self.options.model, messages, self.params(k, candidate)))
            if hit is not None:
                with self._lock:
                    if FORMATS.index(candidate) > FORMATS.index(self.spelling):
                        self.spelling = candidate
                return hit
        return None

    def _answer(self, resp: Any, key: str) -> Prediction:
        content = resp.choices[0].message.content or ""
        usage = ({"prompt_tokens": resp.usage.prompt_tokens or 0, "completion_tokens": resp.usage.completion_tokens or 0,
                  "total_tokens": resp.usage.total_tokens or 0} if resp.usage else None)
        for name, value in (usage or {}).items():
            self._count(name, value)
        if self.cache is not None:
            self.cache.put(key, {"content": content, "usage": usage, "model": resp.model,
                                 "finish_reason": resp.choices[0].finish_reason})
        return Prediction(content, usage=usage)

    def _delay(self, exc: Exception, attempt: int) -> float:
        delay = self.options.backoff * (2 ** attempt)
        response = getattr(exc, "response", None)
        retry_after = response.headers.get("retry-after") if response is not None else None
        try:
            if retry_after is not None:
                delay = max(delay, min(float(retry_after), MAX_RETRY_AFTER))
        except ValueError:
            pass
        return delay

    def _one(self, item: Item, messages: list[dict[str, str]]) -> Prediction:
        pred = self.request(messages, item.n_masks)
        if self.progress is not None:
            self.progress.tick()
        return pred

    def predict_many(self, items: list[Item]) -> list[Prediction]:
        prepared = self.prepare(items)
        started = time.monotonic()
        out = map_until_stopped(lambda ip: self._one(ip[0], ip[1][0]), list(zip(items, prepared)), self.connect().cap,
                                self._cancelled)
        self.seconds += time.monotonic() - started
        for pred, (_, shots) in zip(out, prepared):
            pred.shots = shots or None
        return out

    def predict(self, item: Item) -> str:
        return self.predict_many([item])[0].output or ""

    def describe(self) -> dict[str, Any]:
        w = self.window
        return {"model": self.options.model, "base_url": public_url(self.base_url), **self.prompt_details(),
                "response_format": self.spelling, "response_formats_refused": self.refused,
                "params": {"temperature": self.options.temperature},
                "server_slots": w.slots if w else None, "concurrency_steps": w.history if w else [],
                "request_seconds": round(self.seconds, 3), **dict(self.stats)}
