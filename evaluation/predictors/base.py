"""The predictor protocol: what a predictor is given, what it returns, and how it is configured.

Isolation is by type. Per evaluated example a predictor gets an `Item`: the masked text, the
number of masks and ids that carry no answer (post id, segment, subreddit). The gold words stay
with the runner (evaluation/run.py), which scores. `fit` gets `TrainItem`s of the train split
only, with their gold words: that is training data. Answers are strings, as a model's reply
would be, so every predictor goes through the same parser as an LLM's reply; a predictor may add
ranked answers per mask (for top-k accuracy) and token usage.

Names -> classes live in evaluation/predictors/registry.py; this module imports no predictor.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

from schemas.config import PredictorFields
from schemas.records import MASK



@dataclass(frozen=True, slots=True)
class Item:
    """One example as a model may see it. No field holds or implies a gold word."""

    post_id: str
    segment_index: int
    subreddit: str
    masked_text: str
    n_masks: int

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> "Item":
        text = str(row["masked_text"])
        return cls(str(row["post_id"]), int(row.get("segment_index") or 0), str(row.get("subreddit") or ""),
                   text, text.count(MASK))


@dataclass(frozen=True, slots=True)
class TrainItem:
    """A training example: what a model may see, plus its gold words in mask order (train split only)."""

    post_id: str
    segment_index: int
    subreddit: str
    masked_text: str
    n_masks: int
    surfaces: tuple[str, ...]

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> "TrainItem":
        item = Item.from_row(row)
        return cls(item.post_id, item.segment_index, item.subreddit, item.masked_text, item.n_masks,
                   tuple(str(s) for s in row["surfaces"]))

    @property
    def item(self) -> Item:
        return Item(self.post_id, self.segment_index, self.subreddit, self.masked_text, self.n_masks)


@dataclass(frozen=True)
class PredictorOptions(PredictorFields):
    """Everything a predictor is configured with: the fields declared once in schemas/config.py
    (recipe keys and CLI flags), the key (from the environment) and the response cache folder."""

    api_key: str = field(default="", repr=False)  # never stored, never logged
    cache_dir: str = ""

    def public(self) -> dict[str, Any]:
        """The options as stored with a run: without the key."""
        out = asdict(self)
        out.pop("api_key")
        return out


@dataclass
class Prediction:
    output: str | None
    ranked: list[list[str]] | None = None
    usage: dict[str, int] | None = None
    cached: bool = False
    error: str | None = None
    shots: list[str] | None = None  # post ids of the few-shot examples shown


@runtime_checkable
class Predictor(Protocol):
    """What the runner calls. The constructor takes one argument, a PredictorOptions.

    `predict_many` returns one Prediction (or one raw answer string) per item, in order.
    `name`, `uses_prompts`, `fit` and `describe` are optional for a plugin (see docs/predictors.md).
    """

    name: str
    uses_prompts: bool

    def fit(self, train: Iterable[TrainItem]) -> None: ...

    def predict_many(self, items: list[Item]) -> list[Prediction]: ...

    def describe(self) -> dict[str, Any]: ...


def label_counts(train: Iterable[TrainItem]) -> Counter[str]:
    return Counter(label.lower() for t in train for label in t.surfaces)


def ranked_labels(counts: Counter[str]) -> list[str]:
    """Labels by frequency, ties alphabetical, so baselines are deterministic."""
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


class BasePredictor:
    """Defaults for offline predictors: no prompts, one item at a time through `predict`/`ranked`."""

    name = "base"
    uses_prompts = False
    progress: Any = None  # the runner's progress meter (evaluation/progress.py), for predictors that tick per row

    def __init__(self, options: PredictorOptions | None = None) -> None:
        self.options = options or PredictorOptions()

    def fit(self, train: Iterable[TrainItem]) -> None:
        return None

    def predict(self, item: Item) -> str:
        raise NotImplementedError

    def ranked(self, item: Item) -> list[list[str]] | None:
        return None

    def predict_many(self, items: list[Item]) -> list[Prediction]:
        return [Prediction(self.predict(i), self.ranked(i)) for i in items]

    def describe(self) -> dict[str, Any]:
        return {}
