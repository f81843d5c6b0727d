"""What the memorization probe asks a model: the log-probability of each token of a text, and a
greedy chat answer. Two backends: a local model through transformers (hf-chat's), which computes
the log-probabilities itself, and an OpenAI-compatible server, asked through its completions API
with `echo` and `logprobs` (llama-cpp-python's server and vLLM give them; llama.cpp's llama-server,
Ollama and OpenAI's chat models do not, which the probe then says once).

Both cache their answers in the run's response cache, keyed by model, text and parameters, so a
sweep's cells, or a rerun, ask once.
"""
from __future__ import annotations

import os
from typing import Any

from evaluation.predictors.cache import ResponseCache, cache_key
from evaluation.predictors.chat import ChatConfigError, public_url
from evaluation.predictors.base import PredictorOptions

ECHO = {"echo": True, "logprobs": 1, "max_tokens": 1, "temperature": 0.0}


class LogprobsUnavailable(Exception):
    """The model cannot give the log-probabilities of a text's tokens; the message says why."""


class _Cached:
    """The response cache both backends share, under names of their own."""

    def __init__(self, identity: str, cache_dir: str) -> None:
        self.identity = identity
        self.cache = ResponseCache(cache_dir) if cache_dir else None

    def cached(self, messages: list[dict[str, str]], params: dict[str, Any], compute: Any) -> dict[str, Any]:
        key = cache_key(self.identity, messages, params)
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is None:
            hit = compute()
            if self.cache is not None:
                self.cache.put(key, hit)
        return hit


class ServerProbeModel(_Cached):
    """A model behind an OpenAI-compatible server, as the openai-compatible predictor reaches it."""

    def __init__(self, options: PredictorOptions) -> None:
        from openai import OpenAI

        super().__init__(options.model, options.cache_dir)
        self.model = options.model
        self.base_url = options.base_url or os.environ.get("OPENAI_BASE_URL", "")
        key = os.environ.get(options.api_key_env or "OPENAI_API_KEY", "") or "EMPTY"
        self.client = OpenAI(base_url=self.base_url or None, api_key=key, timeout=max(options.timeout, 1.0) * 4,
                             max_retries=options.max_retries)

    @property
    def where(self) -> str:
        return public_url(self.base_url) or "api.openai.com"

    def _call(self, fn: Any, **kwargs: Any) -> Any:
        import openai

        try:
            return fn(model=self.model, **kwargs)
        except openai.APIConnectionError as exc:
            raise ChatConfigError(f"probe: cannot reach the server at {self.where}: {exc.__cause__ or exc}") from None
        except openai.APIStatusError as exc:
            if exc.status_code in (401, 403):
                raise ChatConfigError(f"probe: server {self.where} answered {exc.status_code}") from None
            raise

    def echo_raw(self, text: str, retries: bool = True) -> Any:
        """The completions API's logprobs of the text echoed back (uncached). `retries=False`: a server
        that refuses echo (llama-server answers 500) is not asked again."""
        import openai

        client = self.client if retries else self.client.with_options(max_retries=0)
        try:
            resp = self._call(client.completions.create, prompt=text, **ECHO)
        except openai.APIStatusError as exc:
            raise LogprobsUnavailable(f"completions with echo and logprobs answered {exc.status_code}: "
                                      f"{str(exc.message)[:160]}") from None
        lp = resp.choices[0].logprobs if resp.choices else None
        if lp is None or not lp.token_logprobs or not lp.text_offset or not lp.tokens:
            raise LogprobsUnavailable("its completions answer holds no logprobs")
        return lp

    def _echo(self, text: str) -> dict[str, Any]:
        lp = self.echo_raw(text)
        # the echoed text's tokens start before its end; the one token generated after it does not
        values = [v for v, at in zip(lp.token_logprobs, lp.text_offset) if at < len(text)][1:]
        if not values or any(v is None for v in values):
            raise LogprobsUnavailable("it did not echo the text's tokens with their logprobs")
        return {"logprobs": [float(v) for v in values]}

    def token_logprobs(self, text: str) -> list[float]:
        """Log-probabilities of the text's tokens after its first (which has no context to be scored in)."""
        return self.cached([{"role": "text", "content": text}], ECHO, lambda: self._echo(text))["logprobs"]

    def answer(self, messages: list[dict[str, str]], max_tokens: int) -> str:
        params = {"temperature": 0.0, "max_tokens": max_tokens}

        def ask() -> dict[str, Any]:
            resp = self._call(self.client.chat.completions.create, messages=messages, **params)
            return {"content": resp.choices[0].message.content or "", "model": resp.model}

        return self.cached(messages, params, ask)["content"]

    def describe(self) -> dict[str, Any]:
        return {"backend": "openai-compatible", "model": self.model, "base_url": public_url(self.base_url),
                "logprobs": "completions API, echo and logprobs"}


class HFProbeModel(_Cached):
    """The local model hf-chat runs (the same loaded weights, when both run in one process)."""

    def __init__(self, options: PredictorOptions) -> None:
        import torch

        from evaluation.predictors.hf_chat import ModelLoadError, load_model, resolve_model

        super().__init__(f"hf-chat:{options.model}", options.cache_dir)
        folder, gguf = resolve_model(options.model)
        self.torch = torch
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        try:
            self.tokenizer, self.model = load_model(str(folder), gguf, self.device)
        except Exception as exc:  # a corrupt or unsupported file: one line naming it
            raise ModelLoadError(f"probe: cannot load {options.model}: {type(exc).__name__}") from None
        self.spec = options.model
        self.context = int(getattr(self.model.config, "max_position_embeddings", 0) or self.tokenizer.model_max_length)

    def _logprobs(self, text: str) -> dict[str, Any]:
        torch = self.torch
        # The text starts after the model's BOS token where it has one (whether or not its tokenizer adds it),
        # as it does at a server that adds it: each token is scored in the context of all before it.
        bos = [] if self.tokenizer.bos_token_id is None else [self.tokenizer.bos_token_id]
        ids = bos + self.tokenizer(text, add_special_tokens=False)["input_ids"]
        if len(ids) > self.context:
            raise LogprobsUnavailable(f"the text has {len(ids)} tokens, more than the context of {self.context}")
        start = 1 + len(bos)  # the text's first token has nothing of the text before it: not scored
        with torch.no_grad():
            logits = self.model(torch.tensor([ids], device=self.device)).logits[0].float()
        logp = torch.log_softmax(logits[:-1], dim=-1)
        target = torch.tensor(ids[1:], device=self.device)
        values = logp.gather(1, target[:, None])[:, 0].tolist()
        return {"logprobs": values[start - 1:]}

    def token_logprobs(self, text: str) -> list[float]:
        """Log-probabilities of the text's tokens after its first, as the echoing server gives them."""
        return self.cached([{"role": "text", "content": text}], {"logprobs": True},
                           lambda: self._logprobs(text))["logprobs"]

    def answer(self, messages: list[dict[str, str]], max_tokens: int) -> str:
        def generate() -> dict[str, Any]:
            torch = self.torch
            text = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            ids = self.tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"].to(self.device)
            eos = self.tokenizer.eos_token_id
            with torch.no_grad():
                out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_tokens,
                                          do_sample=False, pad_token_id=eos, eos_token_id=eos)
            return {"content": self.tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True)}

        return self.cached(messages, {"temperature": 0.0, "max_tokens": max_tokens}, generate)["content"]

    def describe(self) -> dict[str, Any]:
        return {"backend": "hf-chat", "model": self.spec, "device": self.device, "logprobs": "computed (transformers)"}


def probe_model(predictor: str, options: PredictorOptions) -> ServerProbeModel | HFProbeModel:
    if predictor == "hf-chat":
        return HFProbeModel(options)
    return ServerProbeModel(options)
