"""OpenAI-compatible chat predictor (vLLM, Ollama, llama.cpp server, OpenAI) with a response cache.

Server and key come from the options or `OPENAI_BASE_URL` / `OPENAI_API_KEY`; the key is passed
to the client only (never stored, never logged). Requests run with a concurrency limit and a
timeout; 429, 5xx, timeouts and dropped connections are retried with exponential backoff. Every
successful response is cached on disk by model, messages and parameters, so a repeated or
interrupted run sends no request for what is already answered.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from evaluation.cache import ResponseCache, cache_key
from evaluation.fewshot import ShotPool
from evaluation.predictors import BasePredictor, Item, Prediction, PredictorOptions, TrainItem
from evaluation.prompts import build_messages, load_prompts

log = logging.getLogger("express.evaluation.chat")
MAX_RETRY_AFTER = 60.0


class ChatConfigError(RuntimeError):
    """The server refused the run as configured (bad key, unknown model, wrong URL): stop, do not guess."""


def public_url(url: str) -> str:
    """The base URL without credentials or query, safe to store with a run."""
    if not url:
        return ""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class ChatPredictor(BasePredictor):
    name = "openai-compatible"
    uses_prompts = True

    def __init__(self, options: PredictorOptions | None = None) -> None:
        super().__init__(options)
        o = self.options
        if not o.model:
            raise ValueError("openai-compatible needs a model name (--model or [evaluate] model)")
        self.base_url = o.base_url or os.environ.get("OPENAI_BASE_URL", "")
        # Local servers accept any key; the client insists on one.
        self._api_key = o.api_key or os.environ.get(o.api_key_env or "OPENAI_API_KEY", "") or "EMPTY"
        self.prompts = load_prompts(o.prompts_file or None)
        self.setting = self.prompts.get(o.setting, o.prompt_variant)
        self.cache = ResponseCache(o.cache_dir) if o.cache_dir else None
        self.pool: ShotPool | None = None
        self._client: Any = None
        self._lock = threading.Lock()
        self.stats: Counter[str] = Counter()

    @property
    def params(self) -> dict[str, Any]:
        max_tokens = self.options.max_tokens or self.setting.max_tokens
        return {"temperature": self.options.temperature, **({"max_tokens": max_tokens} if max_tokens else {})}

    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                from openai import OpenAI

                self._client = OpenAI(base_url=self.base_url or None, api_key=self._api_key,
                                      timeout=self.options.timeout, max_retries=0)
            return self._client

    def fit(self, train: Iterable[TrainItem]) -> None:
        if self.setting.examples > 0:
            self.pool = ShotPool(train, self.options.seed, self.options.embedding_model)
            self.pool.prepare(self.setting.selection)

    def messages_for(self, item: Item) -> tuple[list[dict[str, str]], list[str]]:
        shots = []
        if self.setting.examples > 0:
            if self.pool is None:
                raise RuntimeError(f"{self.setting.name}: call fit() on the train split first")
            shots = self.pool.select(item, self.setting.examples, self.setting.selection)
        return build_messages(self.setting, item, shots), [s.post_id for s in shots]

    def _count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self.stats[key] += n

    def request(self, messages: list[dict[str, str]]) -> Prediction:
        """One answer: from the cache, else from the server with retries; failures are recorded, not cached."""
        import openai

        key = cache_key(self.options.model, messages, self.params)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            self._count("cache_hits")
            return Prediction(hit["content"], usage=hit.get("usage"), cached=True)
        retryable = (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError)
        for attempt in range(self.options.max_retries + 1):
            self._count("requests")
            try:
                resp = self.client().chat.completions.create(model=self.options.model, messages=messages, **self.params)
            except retryable as exc:
                status = getattr(exc, "status_code", None) or type(exc).__name__
                if attempt == self.options.max_retries:
                    self._count("failed")
                    return Prediction(None, error=f"{status} after {attempt + 1} attempts")
                delay = self._delay(exc, attempt)
                log.warning("request failed (%s); retry %d/%d in %.2fs", status, attempt + 1, self.options.max_retries, delay)
                self._count("retries")
                time.sleep(delay)
                continue
            except openai.APIStatusError as exc:
                if exc.status_code in (401, 403, 404):
                    raise ChatConfigError(f"server {public_url(self.base_url) or 'api.openai.com'} answered "
                                          f"{exc.status_code} for model '{self.options.model}'") from None
                self._count("failed")
                return Prediction(None, error=f"{exc.status_code}: {str(exc.message)[:200]}")
            content = resp.choices[0].message.content or ""
            usage = ({"prompt_tokens": resp.usage.prompt_tokens or 0, "completion_tokens": resp.usage.completion_tokens or 0,
                      "total_tokens": resp.usage.total_tokens or 0} if resp.usage else None)
            if usage:
                for name, value in usage.items():
                    self._count(name, value)
            if self.cache is not None:
                self.cache.put(key, {"content": content, "usage": usage, "model": resp.model,
                                     "finish_reason": resp.choices[0].finish_reason})
            return Prediction(content, usage=usage)
        raise AssertionError("unreachable")

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

    def predict_many(self, items: list[Item]) -> list[Prediction]:
        if self.pool is not None and self.setting.selection == "nearest":
            self.pool.encode_targets(items)
        prepared = [self.messages_for(i) for i in items]
        with ThreadPoolExecutor(max_workers=max(1, self.options.concurrency)) as pool:
            out = list(pool.map(lambda mp: self.request(mp[0]), prepared))
        for pred, (_, shots) in zip(out, prepared):
            pred.shots = shots or None
        return out

    def predict(self, item: Item) -> str:
        return self.predict_many([item])[0].output or ""

    def describe(self) -> dict[str, Any]:
        return {"model": self.options.model, "base_url": public_url(self.base_url),
                "prompt_version": self.prompts.version, "prompt_sha256": self.prompts.sha256,
                "setting": self.setting.name, "prompt_variant": self.setting.variant,
                "answer_format": self.setting.answer_format.name, "params": self.params,
                "few_shot_backend": self.pool.backend if self.pool else "none", **dict(self.stats)}
