"""Local Hugging Face fill-mask model from a directory (the paper's RoBERTa baseline); optional extra.

Needs `transformers` and `torch`, which are not project dependencies: the predictor says so
when they are missing. `--model` is the model directory (or a hub id already in the local cache).
"""
from __future__ import annotations

from typing import Any

from evaluation.predictors import MASK, BasePredictor, Prediction, PredictorOptions, register


@register
class FillMaskPredictor(BasePredictor):
    name = "hf-fill-mask"

    def __init__(self, options: PredictorOptions | None = None) -> None:
        super().__init__(options)
        if not self.options.model:
            raise ValueError("hf-fill-mask needs --model DIR (a local fill-mask model directory)")
        try:
            from transformers import pipeline
        except ImportError as exc:
            raise ImportError("hf-fill-mask needs the optional extra: pip install transformers torch") from exc
        self.pipe = pipeline("fill-mask", model=self.options.model, top_k=max(1, self.options.top_k))
        self.mask_token = self.pipe.tokenizer.mask_token

    def ranked(self, example: dict[str, Any]) -> list[list[str]]:
        text = example["masked_text"].replace(MASK, self.mask_token)
        k = text.count(self.mask_token)
        if k == 0:
            return []
        result = self.pipe(text)
        per_mask = result if k > 1 else [result]
        return [[c["token_str"].strip() for c in cands] for cands in per_mask]

    def predict_many(self, examples: list[dict[str, Any]]) -> list[Prediction]:
        out = []
        for e in examples:
            ranked = self.ranked(e)
            out.append(Prediction(repr([r[0] if r else "" for r in ranked]), ranked))
        return out

    def predict(self, example: dict[str, Any]) -> str:
        return self.predict_many([example])[0].output or ""

    def describe(self) -> dict[str, Any]:
        return {"model": self.options.model}
