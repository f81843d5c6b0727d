"""What the chat predictors share: the prompts file, the setting with its variant, few-shot
examples from the train split, and the answer mode and length (evaluation/predictors/answers.py)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from evaluation.predictors.answers import check_mode
from evaluation.predictors.fewshot import ShotPool
from evaluation.predictors.base import BasePredictor, Item, PredictorOptions, TrainItem
from evaluation.predictors.prompts import build_messages, load_prompts


class PromptedPredictor(BasePredictor):
    """A predictor that sends the prompt settings' messages to a chat model."""

    uses_prompts = True

    def __init__(self, options: PredictorOptions | None = None) -> None:
        super().__init__(options)
        o = self.options
        self.prompts = load_prompts(o.prompts_file or None)
        self.setting = self.prompts.get(o.setting, o.prompt_variant)
        self.answers = check_mode(o.answers)
        self.pool: ShotPool | None = None

    def fit(self, train: Iterable[TrainItem]) -> None:
        if self.setting.examples > 0:
            self.pool = ShotPool(train, self.options.seed, self.options.embedding_model)
            self.pool.prepare(self.setting.selection)

    def prepare(self, items: list[Item]) -> list[tuple[list[dict[str, str]], list[str]]]:
        """(messages, post ids of the shots shown) per item."""
        if self.pool is not None and self.setting.selection == "nearest":
            self.pool.encode_targets(items)
        return [self.messages_for(i) for i in items]

    def messages_for(self, item: Item) -> tuple[list[dict[str, str]], list[str]]:
        shots = []
        if self.setting.examples > 0:
            if self.pool is None:
                raise RuntimeError(f"{self.setting.name}: call fit() on the train split first")
            shots = self.pool.select(item, self.setting.examples, self.setting.selection)
        return build_messages(self.setting, item, shots), [s.post_id for s in shots]

    def max_tokens(self, k: int) -> int:
        """The answer-length cap for a text with k masks: --max-tokens, else the setting's."""
        return self.options.max_tokens or self.setting.answer_budget(k)

    def prompt_details(self) -> dict[str, Any]:
        s = self.setting
        return {"prompt_version": self.prompts.version, "prompt_sha256": self.prompts.sha256, "setting": s.name,
                "prompt_variant": s.variant, "answer_format": s.answer_format.name, "answers": self.answers,
                "max_tokens": self.options.max_tokens or (
                    f"{s.max_tokens}" if s.max_tokens else f"{s.answer_tokens} + {s.tokens_per_mask} per mask"),
                "few_shot_backend": self.pool.backend if self.pool else "none"}
