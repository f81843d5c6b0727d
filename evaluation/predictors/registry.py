"""Find a predictor class by name: ours (a lazy name -> "module:Class" table), an installed
plugin (the `express.predictors` entry-point group), or an import path `pkg.module:Class`.

Nothing is imported until a predictor is asked for, so this module imports no predictor and a
broken optional backend only fails the run that uses it.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import entry_points
from typing import Any

from evaluation.predictors.base import Predictor, PredictorOptions

GROUP = "express.predictors"

BUILTIN: dict[str, str] = {
    "most-frequent": "evaluation.predictors.baselines:MostFrequentLabel",
    "all-zero": "evaluation.predictors.baselines:AllZeroVector",
    "context-lexicon": "evaluation.predictors.baselines:ContextLexicon",
    "tfidf-logreg": "evaluation.predictors.baselines:TfidfLogReg",
    "openai-compatible": "evaluation.predictors.chat:ChatPredictor",
    "hf-fill-mask": "evaluation.predictors.fill_mask:FillMaskPredictor",
    "hf-chat": "evaluation.predictors.hf_chat:HFChatPredictor",
}
_IMPORT_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class PredictorError(ValueError):
    """An unknown, unimportable or malformed predictor: the message says which and why."""


@dataclass(frozen=True)
class PredictorRef:
    name: str  # what the user asked for; stored with the run
    target: str  # "module:Class"
    source: str  # "builtin", "entry point (DIST VERSION)" or "import path"


def _plugins() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def known_names() -> list[str]:
    """Our predictors, then installed plugins (a plugin cannot shadow one of ours)."""
    return [*BUILTIN, *sorted(n for n in _plugins() if n not in BUILTIN)]


def resolve(name: str) -> PredictorRef:
    if name in BUILTIN:
        return PredictorRef(name, BUILTIN[name], "builtin")
    if _IMPORT_PATH.match(name):
        return PredictorRef(name, name, "import path")
    plugins = _plugins()
    if name in plugins:
        ep = plugins[name]
        dist = f" ({ep.dist.name} {ep.dist.version})" if ep.dist else ""
        return PredictorRef(name, ep.value, f"entry point{dist}")
    close = difflib.get_close_matches(name, known_names(), n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise PredictorError(f"unknown predictor '{name}'{hint} (known: {', '.join(known_names())}; "
                         f"or give a class as PKG.MODULE:CLASS)")


def load(ref: PredictorRef) -> type:
    module_name, _, attr = ref.target.partition(":")
    try:
        obj: Any = import_module(module_name)
    except ImportError as exc:
        raise PredictorError(f"predictor '{ref.name}': cannot import {module_name} ({exc})") from exc
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise PredictorError(f"predictor '{ref.name}': {module_name} has no {attr}")
        obj = getattr(obj, part)
    if not isinstance(obj, type):
        raise PredictorError(f"predictor '{ref.name}': {ref.target} is not a class")
    if not callable(getattr(obj, "predict_many", None)) and not callable(getattr(obj, "predict", None)):
        raise PredictorError(f"predictor '{ref.name}': {ref.target} has neither predict_many(items) nor "
                             f"predict(item) (see docs/predictors.md)")
    return obj


def predictor_class(name: str) -> type:
    return load(resolve(name))


def uses_prompts(cls: type) -> bool:
    return bool(getattr(cls, "uses_prompts", False))


def get_predictor(name: str, options: PredictorOptions | None = None) -> Predictor:
    return predictor_class(name)(options or PredictorOptions())
