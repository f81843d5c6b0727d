"""Local Hugging Face masked language model from a folder (the paper's RoBERTa baseline).

Optional extra: `pip install -e '.[hf]'` (transformers + the CPU torch wheel). `--model` is the
model folder; nothing is downloaded. Each mask gets the model's top-k tokens from one forward pass
over the text; a text longer than the model's window is read in windows centred on each mask, so
every mask is answered however long the post. Ranks are those of the logits, the order of
transformers' fill-mask pipeline.
"""
from __future__ import annotations

from typing import Any

from evaluation.predictors.base import MASK, BasePredictor, Item, Prediction, PredictorOptions

HF_EXTRA = ".venv/bin/pip install -c constraints.txt -e '.[hf]'"


class FillMaskPredictor(BasePredictor):
    name = "hf-fill-mask"

    def __init__(self, options: PredictorOptions | None = None) -> None:
        super().__init__(options)
        if not self.options.model:
            raise ValueError("hf-fill-mask needs --model DIR (a local fill-mask model folder)")
        try:
            import torch
            from transformers import AutoModelForMaskedLM, AutoTokenizer
        except ImportError as exc:
            raise ImportError(f"hf-fill-mask needs the optional extra: {HF_EXTRA}") from exc
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(self.options.model, local_files_only=True)
        self.model = AutoModelForMaskedLM.from_pretrained(self.options.model, local_files_only=True).eval()
        if self.tokenizer.mask_token_id is None:
            raise ValueError(f"hf-fill-mask: the tokenizer in {self.options.model} has no mask token")
        limit = self.tokenizer.model_max_length
        positions = getattr(self.model.config, "max_position_embeddings", None) or limit
        # RoBERTa-style models reserve padding_idx + 1 positions; the tokenizer's limit already says so.
        self.window = min(limit if limit < 1_000_000 else positions, positions)
        self.prefix, self.suffix = self._special_ends()
        self.forward_passes = 0
        self.windowed = 0  # texts longer than the window

    def _special_ends(self) -> tuple[list[int], list[int]]:
        """The special tokens the tokenizer puts before and after a text ([CLS] ... [SEP], <s> ... </s>)."""
        full = self.tokenizer("a")["input_ids"]
        body = self.tokenizer("a", add_special_tokens=False)["input_ids"]
        for i in range(len(full) - len(body) + 1):
            if full[i:i + len(body)] == body:
                return full[:i], full[i + len(body):]
        raise ValueError(f"hf-fill-mask: cannot place a text between the special tokens of {self.options.model}")

    def _top_k(self, ids: list[int], positions: list[int]) -> list[list[str]]:
        with self.torch.no_grad():
            t = self.torch.tensor([ids])
            logits = self.model(input_ids=t, attention_mask=self.torch.ones_like(t)).logits[0]
        self.forward_passes += 1
        k = max(1, self.options.top_k)
        out = []
        for pos in positions:
            top = self.torch.topk(logits[pos], k=min(k, logits.shape[-1])).indices.tolist()
            out.append([self.tokenizer.decode([t]).strip() for t in top])
        return out

    def ranked(self, item: Item) -> list[list[str]]:
        text = item.masked_text.replace(MASK, self.tokenizer.mask_token)
        body = self.tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"]
        masks = [i for i, t in enumerate(body) if t == self.tokenizer.mask_token_id]
        if not masks:
            return []
        lead = len(self.prefix)
        width = self.window - lead - len(self.suffix)
        if len(body) <= width:
            return self._top_k(self.prefix + body + self.suffix, [m + lead for m in masks])
        out = []
        for m in masks:  # one window per mask, centred on it
            start = max(0, min(m - width // 2, len(body) - width))
            out.extend(self._top_k(self.prefix + body[start:start + width] + self.suffix, [m - start + lead]))
        self.windowed += 1
        return out

    def predict_many(self, items: list[Item]) -> list[Prediction]:
        out = []
        for item in items:
            ranked = self.ranked(item)
            out.append(Prediction(repr([r[0] if r else "" for r in ranked]), ranked))
        return out

    def predict(self, item: Item) -> str:
        return self.predict_many([item])[0].output or ""

    def describe(self) -> dict[str, Any]:
        return {"model": self.options.model, "model_type": self.model.config.model_type,
                "vocab_size": self.model.config.vocab_size, "window": self.window,
                "forward_passes": self.forward_passes, "windowed_texts": self.windowed}
