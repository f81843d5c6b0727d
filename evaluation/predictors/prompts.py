"""Prompt settings (zero-shot, few-shot random/nearest, chain of thought), prompt variants (persona
line, answer format) and answer formats, read from versioned data.

The texts live in `evaluation/data/prompts.toml`; this module only loads them, checks them, and
renders chat messages for a target item and its few-shot examples.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evaluation.datafiles import DATA_DIR, read_data_file
from schemas.records import MASK
PROMPTS_FILE = DATA_DIR / "prompts.toml"
SELECTIONS = ("none", "random", "nearest")
DEFAULT_VARIANT = "default"
_SETTING_KEYS = {"description", "examples", "selection", "system", "user", "max_tokens", "answer_tokens",
                 "tokens_per_mask", "reasoning"}
_VARIANT_KEYS = {"description", "system", "answer_format"}
_FORMAT_KEYS = {"phrase", "style"}
# How an answer (a few-shot example's gold words, the format example) is written, per style.
STYLES: dict[str, Callable[[Sequence[str]], str]] = {
    "python-list": lambda words: repr(list(words)),
    "json-object": lambda words: json.dumps({"answers": list(words)}),
}

Message = dict[str, str]


@dataclass(frozen=True)
class AnswerFormat:
    name: str
    phrase: str  # fills {format} in the user template, e.g. "a Python list"
    style: str  # a key of STYLES

    def render(self, words: Sequence[str]) -> str:
        return STYLES[self.style](words)


@dataclass(frozen=True)
class PromptSetting:
    name: str
    description: str
    system: str
    user: str
    examples: int
    selection: str
    max_tokens: int  # a fixed answer-length cap (0: answer_tokens + tokens_per_mask per mask)
    answer_format: AnswerFormat
    variant: str = DEFAULT_VARIANT
    answer_tokens: int = 0
    tokens_per_mask: int = 0
    reasoning: bool = False  # the model reasons before it answers (a structured answer holds both)

    def answer_budget(self, k: int) -> int:
        """Most tokens an answer to a text with k masks may take (0 = no cap)."""
        return self.max_tokens or (self.answer_tokens + self.tokens_per_mask * k)


@dataclass(frozen=True)
class PromptVariant:
    name: str
    description: str
    system: str  # a line put before the setting's system text ("" = none)
    answer_format: str  # a [formats.*] name ("" = the default format)


@dataclass(frozen=True)
class PromptSet:
    version: str
    path: str
    sha256: str
    settings: dict[str, PromptSetting]
    variants: dict[str, PromptVariant]
    formats: dict[str, AnswerFormat]

    def get(self, name: str, variant: str = DEFAULT_VARIANT) -> PromptSetting:
        """A setting with a variant applied; errors name the file and what is known."""
        if name not in self.settings:
            raise KeyError(f"unknown prompt setting '{name}' in {self.path}; known: {', '.join(self.settings)}")
        if variant not in self.variants:
            raise KeyError(f"unknown prompt variant '{variant}' in {self.path}; known: {', '.join(self.variants)}")
        base, v = self.settings[name], self.variants[variant]
        system = "\n\n".join(s for s in (v.system, base.system) if s)
        fmt = self.formats[v.answer_format] if v.answer_format else base.answer_format
        if fmt != base.answer_format and "{format}" not in base.user:
            raise KeyError(f"{self.path} [variants.{variant}]: changes the answer format, but the user template of "
                           f"[settings.{name}] has no {{format}} placeholder")
        return replace(base, system=system, answer_format=fmt, variant=variant)


def _table(p: Path, data: dict[str, Any], key: str, allowed: set[str]) -> dict[str, dict[str, Any]]:
    tables = data.get(key, {})
    for name, entry in tables.items():
        unknown = set(entry) - allowed
        if unknown:
            raise ValueError(f"{p} [{key}.{name}]: unknown keys {sorted(unknown)}")
    return tables


def load_prompts(path: str | Path | None = None) -> PromptSet:
    """Load and check a prompts file; errors name the file and the table."""
    p = Path(path) if path else PROMPTS_FILE
    data, sha256 = read_data_file(p)
    formats = {"list": AnswerFormat("list", "a Python list", "python-list")}  # the paper's format
    for name, entry in _table(p, data, "formats", _FORMAT_KEYS).items():
        style = entry.get("style", "python-list")
        if style not in STYLES:
            raise ValueError(f"{p} [formats.{name}]: style '{style}' is not one of {', '.join(STYLES)}")
        formats[name] = AnswerFormat(name, str(entry.get("phrase", "")), style)
    base = data.get("template", {})
    default_format = base.get("answer_format", "list")
    if default_format not in formats:
        raise ValueError(f"{p} [template]: answer_format '{default_format}' is not a [formats.*] table")
    settings: dict[str, PromptSetting] = {}
    for name, entry in _table(p, data, "settings", _SETTING_KEYS).items():
        examples = int(entry.get("examples", 0))
        selection = entry.get("selection", "random" if examples else "none")
        if selection not in SELECTIONS or (examples > 0) == (selection == "none"):
            raise ValueError(f"{p} [settings.{name}]: selection '{selection}' does not fit examples={examples}")
        user = entry.get("user", base.get("user", ""))
        if "{text}" not in user:
            raise ValueError(f"{p} [settings.{name}]: the user template needs a {{text}} placeholder")
        budget = {key: int(entry.get(key, base.get(key, 0))) for key in ("max_tokens", "answer_tokens", "tokens_per_mask")}
        settings[name] = PromptSetting(name, entry.get("description", ""), entry.get("system", base.get("system", "")),
                                       user, examples, selection, budget["max_tokens"], formats[default_format],
                                       answer_tokens=budget["answer_tokens"], tokens_per_mask=budget["tokens_per_mask"],
                                       reasoning=bool(entry.get("reasoning", False)))
    if not settings:
        raise ValueError(f"{p}: no [settings.*] tables")
    variants = {DEFAULT_VARIANT: PromptVariant(DEFAULT_VARIANT, "the settings as written", "", "")}
    for name, entry in _table(p, data, "variants", _VARIANT_KEYS).items():
        fmt = entry.get("answer_format", "")
        if fmt and fmt not in formats:
            raise ValueError(f"{p} [variants.{name}]: answer_format '{fmt}' is not a [formats.*] table")
        variants[name] = PromptVariant(name, entry.get("description", ""), entry.get("system", ""), fmt)
    return PromptSet(data["version"], str(p), sha256, settings, variants, formats)


def mask_count(text: str) -> int:
    return text.count(MASK)


def render_user(setting: PromptSetting, text: str) -> str:
    k = mask_count(text)
    example = setting.answer_format.render([f"word{i + 1}" for i in range(k)])
    return setting.user.format(k=k, words="word" if k == 1 else "words", are="is" if k == 1 else "are",
                               text=text, example_list=example, format=setting.answer_format.phrase)


def build_messages(setting: PromptSetting, target: Any, shots: Sequence[Any]) -> list[Message]:
    """System (if any), then each few-shot example as a user/assistant turn, then the target.

    `target` needs `masked_text`; each shot `masked_text` and `surfaces` (Item / TrainItem)."""
    messages: list[Message] = []
    if setting.system:
        messages.append({"role": "system", "content": setting.system})
    for shot in shots:
        messages.append({"role": "user", "content": render_user(setting, shot.masked_text)})
        messages.append({"role": "assistant", "content": setting.answer_format.render([w.lower() for w in shot.surfaces])})
    messages.append({"role": "user", "content": render_user(setting, target.masked_text)})
    return messages
