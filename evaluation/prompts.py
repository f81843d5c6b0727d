"""Prompt settings (zero-shot, few-shot random/nearest, chain of thought) read from versioned data.

The texts live in `evaluation/data/prompts.toml`; this module only loads them, checks them, and
renders chat messages for a target example and its few-shot examples.
"""
from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROMPTS_FILE = Path(__file__).parent / "data" / "prompts.toml"
MASK = "<mask>"
SELECTIONS = ("none", "random", "nearest")
_SETTING_KEYS = {"description", "examples", "selection", "system", "user", "max_tokens"}

Message = dict[str, str]


@dataclass(frozen=True)
class PromptSetting:
    name: str
    description: str
    system: str
    user: str
    examples: int
    selection: str
    max_tokens: int


@dataclass(frozen=True)
class PromptSet:
    version: str
    path: str
    sha256: str
    settings: dict[str, PromptSetting]

    def get(self, name: str) -> PromptSetting:
        if name not in self.settings:
            raise KeyError(f"unknown prompt setting '{name}' in {self.path}; known: {', '.join(self.settings)}")
        return self.settings[name]


def load_prompts(path: str | Path | None = None) -> PromptSet:
    """Load and check a prompts file; errors name the file and the setting."""
    p = Path(path) if path else PROMPTS_FILE
    raw = p.read_bytes()
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{p}: invalid TOML: {exc}") from exc
    if not isinstance(data.get("version"), str) or not data["version"]:
        raise ValueError(f"{p}: needs a non-empty `version`")
    base = data.get("template", {})
    settings: dict[str, PromptSetting] = {}
    for name, entry in data.get("settings", {}).items():
        unknown = set(entry) - _SETTING_KEYS
        if unknown:
            raise ValueError(f"{p} [settings.{name}]: unknown keys {sorted(unknown)}")
        examples = int(entry.get("examples", 0))
        selection = entry.get("selection", "random" if examples else "none")
        if selection not in SELECTIONS or (examples > 0) == (selection == "none"):
            raise ValueError(f"{p} [settings.{name}]: selection '{selection}' does not fit examples={examples}")
        user = entry.get("user", base.get("user", ""))
        if "{text}" not in user:
            raise ValueError(f"{p} [settings.{name}]: the user template needs a {{text}} placeholder")
        settings[name] = PromptSetting(name, entry.get("description", ""), entry.get("system", base.get("system", "")),
                                       user, examples, selection, int(entry.get("max_tokens", 0)))
    if not settings:
        raise ValueError(f"{p}: no [settings.*] tables")
    return PromptSet(data["version"], str(p), hashlib.sha256(raw).hexdigest(), settings)


def mask_count(text: str) -> int:
    return text.count(MASK)


def render_user(setting: PromptSetting, text: str) -> str:
    k = mask_count(text)
    example = repr([f"word{i + 1}" for i in range(k)])
    return setting.user.format(k=k, words="word" if k == 1 else "words", are="is" if k == 1 else "are",
                               text=text, example_list=example)


def build_messages(setting: PromptSetting, target: dict[str, Any], shots: list[dict[str, Any]]) -> list[Message]:
    """System (if any), then each few-shot example as a user/assistant turn, then the target."""
    messages: list[Message] = []
    if setting.system:
        messages.append({"role": "system", "content": setting.system})
    for shot in shots:
        messages.append({"role": "user", "content": render_user(setting, shot["masked_text"])})
        messages.append({"role": "assistant", "content": repr([w.lower() for w in shot["surfaces"]])})
    messages.append({"role": "user", "content": render_user(setting, target["masked_text"])})
    return messages
