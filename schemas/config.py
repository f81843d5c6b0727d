"""Recipe configuration: one validated TOML file per recipe, overridable from the CLI."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A recipe file that does not validate; the message names the file and the key."""


@dataclass(frozen=True)
class DatasetConfig:
    name: str = "express"
    description: str = ""


@dataclass(frozen=True)
class FilterConfig:
    bot_authors: tuple[str, ...] = ("AutoModerator",)
    drop_nsfw: bool = True
    drop_deleted: bool = True
    drop_duplicates: bool = True
    min_words: int = 0
    max_words: int = 0  # 0 = no upper bound


@dataclass(frozen=True)
class ExtractConfig:
    keep_negated: bool = False
    batch_size: int = 256
    min_masks: int = 1
    max_masks: int = 5


@dataclass(frozen=True)
class SplitConfig:
    train: float = 0.8
    validation: float = 0.1
    test: float = 0.1
    seed: str = "express"


@dataclass(frozen=True)
class EvaluateConfig:
    split: str = "test"
    predictor: str = "most-frequent"
    setting: str = "zero-shot"
    # Predictor options (evaluation/predictors.py::PredictorOptions); the API key only ever comes
    # from the environment variable named by api_key_env, never from a file.
    model: str = ""
    base_url: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 4
    timeout: float = 60.0
    max_retries: int = 5
    backoff: float = 1.0
    temperature: float = 0.0
    max_tokens: int = 0
    seed: int = 0
    context_words: int = 30
    top_k: int = 5
    prompts_file: str = ""
    embedding_model: str = ""
    bootstrap: int = 1000


@dataclass(frozen=True)
class Recipe:
    dataset: DatasetConfig = field(default_factory=DatasetConfig)
    filters: FilterConfig = field(default_factory=FilterConfig)
    extract: ExtractConfig = field(default_factory=ExtractConfig)
    splits: SplitConfig = field(default_factory=SplitConfig)
    evaluate: EvaluateConfig = field(default_factory=EvaluateConfig)
    source_path: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if is_dataclass(value):
                out[f.name] = {k.name: _plain(getattr(value, k.name)) for k in fields(value)}
        return out


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _build(cls: type, data: dict[str, Any], where: str) -> Any:
    known = {f.name: f for f in fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            raise ConfigError(f"{where}: unknown key '{key}' (expected one of {sorted(known)})")
        default = getattr(cls(), key)
        if isinstance(default, tuple):
            if not isinstance(value, list):
                raise ConfigError(f"{where}.{key}: expected a list, got {value!r}")
            value = tuple(value)
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise ConfigError(f"{where}.{key}: expected true/false, got {value!r}")
        elif isinstance(default, (int, float)) and not isinstance(default, bool):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"{where}.{key}: expected a number, got {value!r}")
        elif isinstance(default, str) and not isinstance(value, str):
            raise ConfigError(f"{where}.{key}: expected a string, got {value!r}")
        kwargs[key] = value
    return cls(**kwargs)


def recipe_from_dict(data: dict[str, Any], where: str = "<config>") -> Recipe:
    sections = {f.name: f for f in fields(Recipe) if f.name != "source_path"}
    parts: dict[str, Any] = {}
    for name, value in data.items():
        if name not in sections:
            raise ConfigError(f"{where}: unknown section [{name}] (expected one of {sorted(sections)})")
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: [{name}] must be a table")
        parts[name] = _build(type(getattr(Recipe(), name)), value, f"{where} [{name}]")
    recipe = Recipe(**parts, source_path=where)
    validate(recipe, where)
    return recipe


def validate(recipe: Recipe, where: str) -> None:
    s = recipe.splits
    ratios = (s.train, s.validation, s.test)
    if any(r < 0 for r in ratios) or abs(sum(ratios) - 1.0) > 1e-9:
        raise ConfigError(f"{where} [splits]: train+validation+test must be 1.0, got {sum(ratios)}")
    e = recipe.extract
    if not 1 <= e.min_masks <= e.max_masks:
        raise ConfigError(f"{where} [extract]: need 1 <= min_masks <= max_masks")


def load_recipe(path: str | Path | None) -> Recipe:
    """Load and validate a recipe; None gives the defaults."""
    if path is None:
        return Recipe()
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError as exc:
        raise ConfigError(f"{p}: config file not found") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: invalid TOML: {exc}") from exc
    return recipe_from_dict(data, str(p))


def override(recipe: Recipe, section: str, **values: Any) -> Recipe:
    """Return a recipe with some keys of one section replaced (CLI overrides)."""
    return replace(recipe, **{section: replace(getattr(recipe, section), **values)})
