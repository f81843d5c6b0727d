"""The filter step, one shard at a time and in parallel: parse, join comments to NSFW submissions,
the stateless filters (the disclosure prefilter among the first), PII scrubbing of what is kept,
and the per-post keys dedupe needs.

Outputs in the shard folder: posts.parquet (kept posts), quarantine-ingest.parquet (dropped and
malformed), nsfw-submissions.txt (ids for the comment join of later shards) and the dedupe key
files (filters/dedupe.py). Comment-dump shards run after every submission shard, with their ids.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from extractors.disclosures import maskable_terms
from extractors.prefilter import Prefilter
from filters.base import Filter, run_filters
from filters.dedupe import NEAR_SIGNATURES, dedupe_filters, split_chain
from filters.duplicate_index import KEYS, KEYS_FILE
from filters.near_index import BANDS_FILE, write_bands
from filters.reddit import filters_from_config
from pipeline.results import FilterResult
from pipeline.run import load_saved_recipe
from pipeline.shards import Shard, commit, read_marker, seconds_since, shard_lines, tmp_name, write_marker
from schemas.config import Recipe
from schemas.funnel import Funnel
from schemas.records import QUARANTINE, RAW_POSTS, RawPost, quarantine_values
from sources.dumps import parse_line
from sources.join import SubmissionFlags, flagged_id, is_comment_input, join_comments
from warehouse.parquet import ParquetSink

if TYPE_CHECKING:
    from filters.pii import Scrubber

NSFW_IDS = "nsfw-submissions.txt"  # ids of the shard's NSFW submissions, one a line, for the comment join
SCRUB_BATCH = 256  # posts per PII-scrubbing batch (the name detector tags a batch at once)
NO_DISCLOSURE = "no_disclosure"  # the reason extraction gives too, for candidates spaCy finds nothing in


@dataclass
class DisclosureCandidates:
    """Keeps the posts in which the extraction's regex prefilter would open a tagging window; the
    others cannot become examples, so language ID, duplicate keys and PII scrubbing skip them."""

    prefilter: Prefilter
    name: str = NO_DISCLOSURE

    def check(self, post: RawPost) -> str | None:
        return None if self.prefilter.selects(post.text) else NO_DISCLOSURE


def filter_chain(recipe: Recipe) -> tuple[list[Filter], list[Filter]]:
    """(stateless, stateful) filters of the build, cheapest and most selective first (see
    filters.reddit.filters_from_config): the disclosure prefilter right after the field checks."""
    candidates = DisclosureCandidates(Prefilter(maskable_terms()))
    return split_chain(filters_from_config(recipe.filters, selective=[candidates]))


def _scrubber(filters: Any) -> Scrubber:
    """Presidio is imported here, on the worker that filters, not by every process that wires a
    build (1.7 s of the flow process's start-up)."""
    from filters.pii import Scrubber

    return Scrubber.from_config(filters)


def scrubbed(posts: Iterator[RawPost], scrubber: Scrubber | None) -> Iterator[RawPost]:
    """The posts with their PII replaced, in order, scrubbed SCRUB_BATCH at a time (one NER pass a
    batch); unchanged without a scrubber."""
    if scrubber is None:
        yield from posts
        return
    batch: list[RawPost] = []
    for post in posts:
        batch.append(post)
        if len(batch) == SCRUB_BATCH:
            yield from scrubber.scrub_posts(batch)
            batch = []
    if batch:
        yield from scrubber.scrub_posts(batch)


def nsfw_id_files(shards: list[dict[str, Any]]) -> list[str]:
    """The non-empty NSFW-id files of finished shards."""
    return [str(p) for s in shards if (p := Path(s["path"]) / NSFW_IDS).exists() and p.stat().st_size]


def _noting(records: Iterator[Any], out: TextIO) -> Iterator[Any]:
    """Pass records through, writing the id of every NSFW submission (kept or not) to `out`."""
    for rec in records:
        if isinstance(rec, RawPost) and (pid := flagged_id(rec)) is not None:
            out.write(pid + "\n")
        yield rec


def _counting_unjoined(records: Iterator[Any], counts: dict[str, int]) -> Iterator[Any]:
    """Count comments the join left SFW: ids of other shards could still flag them."""
    for rec in records:
        if isinstance(rec, RawPost) and rec.kind == "comment" and rec.link_id and not rec.over_18:
            counts["unjoined_comments"] += 1
        yield rec


def needs_join(done: FilterResult, nsfw_files: list[str] | None) -> bool:
    """A filtered shard is redone only if it has comments that more NSFW-id files could flag."""
    return done.unjoined_comments > 0 and done.nsfw_files < len(nsfw_files or [])


def rejoin_plan(new_shards: list[dict[str, Any]], prior_shards: list[dict[str, Any]],
                first_pass: list[FilterResult]) -> list[tuple[dict[str, Any], list[str]]]:
    """The comment join across shards, after every submission shard is filtered: which shards to
    filter (again) with which NSFW-id files. Comment-dump (`RC_*`) shards get every submission
    shard's ids; a submission shard is redone when its comments could be flagged by earlier shards'
    ids, as a build reading the inputs in order would flag them."""
    posts_first = [s for s in new_shards if not is_comment_input(s["source_file"])]
    comments = [s for s in new_shards if is_comment_input(s["source_file"])]
    earlier = [s for s in prior_shards if not is_comment_input(s["source_file"])]
    second: list[tuple[dict[str, Any], list[str]]] = []
    for s, done in zip(posts_first, first_pass):
        ids = nsfw_id_files(earlier)
        if needs_join(done, ids):
            second.append((s, ids))
        earlier.append(s)
    all_ids = nsfw_id_files(earlier)
    return second + [(s, all_ids) for s in comments]


def filter_shard(shard: dict[str, Any], recipe_path: str, nsfw_files: list[str] | None = None) -> FilterResult:
    """Parse a shard's lines, join comments to NSFW submissions (of this shard and of `nsfw_files`,
    written by earlier shards) and apply the stateless filters; malformed lines are quarantined."""
    s = Shard.from_dict(shard)
    done = read_marker(s.path, "filter")
    if done is not None and not needs_join(FilterResult.from_marker(done), nsfw_files):
        return FilterResult.from_marker(done)
    started = time.perf_counter()
    recipe = load_saved_recipe(recipe_path)
    stateless, stateful = filter_chain(recipe)
    dup, near = dedupe_filters(stateful)
    flags = SubmissionFlags()
    for f in nsfw_files or []:
        with open(f) as fh:
            flags.add_ids(line.rstrip("\n") for line in fh)
    funnel = Funnel()
    posts_path, quarantine_path = s.path / "posts.parquet", s.path / "quarantine-ingest.parquet"
    ids_path, keys_path = s.path / NSFW_IDS, s.path / KEYS_FILE
    sigs_path, bands_path = s.path / NEAR_SIGNATURES, s.path / BANDS_FILE
    outputs = [posts_path, quarantine_path, ids_path] + ([keys_path] if dup else []) + \
        ([sigs_path, bands_path] if near else [])
    sigs: list[np.ndarray] = []
    counts = {"unjoined_comments": 0}
    with open(tmp_name(ids_path), "w") as ids, ExitStack() as stack:
        keys = stack.enter_context(ParquetSink(tmp_name(keys_path), KEYS)) if dup else None
        records = (parse_line(line, s.source_file, n, "dump") for n, line in shard_lines(s) if line.strip())
        records = _counting_unjoined(join_comments(_noting(records, ids), flags), counts)
        with ParquetSink(tmp_name(posts_path), RAW_POSTS) as posts, \
             ParquetSink(tmp_name(quarantine_path), QUARANTINE) as dropped:
            kept = run_filters(records, stateless, funnel,
                               lambda r, why: dropped.write_values(quarantine_values("ingest", r, why, why != NO_DISCLOSURE)))
            for post in scrubbed(kept, _scrubber(recipe.filters) if recipe.filters.scrub_pii else None):
                posts.write_record(post)
                if keys is not None:
                    keys.write({"key": dup.key(post)})
                if near is not None:
                    sigs.append(near.signature(post.text))
    if near is not None:
        matrix = np.array(sigs, dtype=np.uint32).reshape(len(sigs), near.num_perm)
        np.save(tmp_name(sigs_path), matrix)
        write_bands(tmp_name(bands_path), near.band_keys(matrix))
    funnel.check(f"filter {s.name}")
    commit(outputs)
    result = FilterResult(s.name, funnel, seconds_since(started), False, flags.joined, len(nsfw_files or []),
                          counts["unjoined_comments"])
    write_marker(s.path, "filter", result.to_marker())
    return result
