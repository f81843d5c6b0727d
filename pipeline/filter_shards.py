"""The filter step, one shard at a time and in parallel: parse, join comments to NSFW submissions,
the stateless filters (the disclosure prefilter among the first), PII scrubbing of what is kept,
and the per-post keys dedupe needs.

Outputs in the shard folder: posts.parquet (kept posts), quarantine-ingest.parquet (dropped and
malformed), nsfw-submissions.txt (ids for the comment join of later shards) and the dedupe key
files (filters/dedupe.py). Comment-dump shards run after every submission shard, with their ids.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from common.parquet import ParquetSink
from extractors.disclosures import maskable_terms
from extractors.prefilter import Prefilter
from filters.base import Filter, run_filters
from filters.candidates import NO_DISCLOSURE, DisclosureCandidates
from filters.dedupe import NEAR_SIGNATURES, dedupe_filters, split_chain
from filters.duplicate_index import KEYS, KEYS_FILE
from filters.near_index import BANDS_FILE, write_bands
from filters.chain import filters_from_config
from filters.takedown import TakedownFilter
from pipeline.results import FilterResult
from pipeline.shards import Shard, shard_records
from pipeline.steps import Outputs, Step
from schemas.config import Recipe
from schemas.funnel import Funnel
from schemas.records import QUARANTINE, RAW_POSTS, RawPost, quarantine_values
from sources.join import SubmissionFlags, flagged_id, is_comment_input, join_comments

if TYPE_CHECKING:
    from privacy.scrubber import Scrubber

SCRUB_BATCH = 256  # posts per PII-scrubbing batch (the name detector tags a batch at once)


def filter_chain(recipe: Recipe) -> tuple[list[Filter], list[Filter]]:
    """(stateless, stateful) filters of the build, in the recipe's order (filters/chain.py): the
    disclosure prefilter where the chain says `disclosure`."""
    candidates = DisclosureCandidates(Prefilter(maskable_terms()).selects)
    stateless, stateful = split_chain(filters_from_config(recipe.filters, selective=[candidates]))
    return [TakedownFilter(), *stateless], stateful  # what the read took out, counted before anything else


def _scrubber(privacy: Any) -> Scrubber:
    """Presidio is imported here, on the worker that filters, not by every process that wires a
    build (it would lengthen the flow process's start-up)."""
    from privacy.scrubber import Scrubber

    return Scrubber.from_config(privacy)


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


def nsfw_id_files(shards: list[Shard]) -> list[str]:
    """The non-empty NSFW-id files of finished shards."""
    return [str(p) for s in shards if (p := s.nsfw_ids).exists() and p.stat().st_size]


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


def rejoin_plan(new_shards: list[Shard], prior_shards: list[Shard],
                first_pass: list[FilterResult]) -> list[tuple[Shard, list[str]]]:
    """The comment join across shards, after every submission shard is filtered: which shards to
    filter (again) with which NSFW-id files. Comment-dump (`RC_*`) shards get every submission
    shard's ids; a submission shard is redone when its comments could be flagged by earlier shards'
    ids, as a build reading the inputs in order would flag them."""
    posts_first = [s for s in new_shards if not is_comment_input(s.source_file)]
    comments = [s for s in new_shards if is_comment_input(s.source_file)]
    earlier = [s for s in prior_shards if not is_comment_input(s.source_file)]
    second: list[tuple[Shard, list[str]]] = []
    for s, done in zip(posts_first, first_pass):
        ids = nsfw_id_files(earlier)
        if needs_join(done, ids):
            second.append((s, ids))
        earlier.append(s)
    all_ids = nsfw_id_files(earlier)
    return second + [(s, all_ids) for s in comments]


class FilterStep(Step[Shard, FilterResult]):
    """Parse a shard's lines, join comments to NSFW submissions (of this shard and of the
    `nsfw_files` earlier shards wrote) and apply the stateless filters; malformed lines are
    quarantined. Outputs: posts.parquet, quarantine-ingest.parquet, nsfw-submissions.txt and the
    dedupe key files (filters/dedupe.py)."""

    name = "filter"
    result = FilterResult

    def setup(self, recipe: Recipe) -> None:
        super().setup(recipe)
        self.stateless, stateful = filter_chain(recipe)
        self.dup, self.near = dedupe_filters(stateful)
        self.scrubber = _scrubber(recipe.privacy) if recipe.privacy.scrub_pii else None

    def teardown(self) -> None:
        """Drop the filters' language model (reloaded if this process filters again): a worker
        holds one big model at a time, and the extract step's comes next."""
        from filters.language import identifier

        identifier.cache_clear()

    @classmethod
    def folder(cls, unit: Shard) -> Path:
        return unit.path

    @classmethod
    def stale(cls, unit: Shard, done: FilterResult, nsfw_files: list[str] | None = None, **params: Any) -> bool:
        return needs_join(done, nsfw_files)

    def run(self, unit: Shard, out: Outputs, nsfw_files: list[str] | None = None, **params: Any) -> FilterResult:
        s, dup, near = unit, self.dup, self.near
        flags = SubmissionFlags()
        for f in nsfw_files or []:
            with open(f) as fh:
                flags.add_ids(line.rstrip("\n") for line in fh)
        funnel = Funnel()
        sigs: list[np.ndarray] = []
        counts = {"unjoined_comments": 0}
        with open(out(s.nsfw_ids), "w") as ids, ExitStack() as stack:
            keys = stack.enter_context(ParquetSink(out(s.path / KEYS_FILE), KEYS)) if dup else None
            records = shard_records(s)
            records = _counting_unjoined(join_comments(_noting(records, ids), flags), counts)
            with ParquetSink(out(s.posts), RAW_POSTS) as posts, \
                 ParquetSink(out(s.quarantine("ingest")), QUARANTINE) as dropped:
                kept = run_filters(records, self.stateless, funnel,
                                   lambda r, why: dropped.write_values(quarantine_values("ingest", r, why,
                                                                                         why != NO_DISCLOSURE)))
                for post in scrubbed(kept, self.scrubber):
                    posts.write_record(post)
                    if keys is not None:
                        keys.write({"key": dup.key(post)})
                    if near is not None:
                        sigs.append(near.signature(post.text))
        if near is not None:
            matrix = np.array(sigs, dtype=np.uint32).reshape(len(sigs), near.num_perm)
            np.save(out(s.path / NEAR_SIGNATURES), matrix)
            write_bands(out(s.path / BANDS_FILE), near.band_keys(matrix))
        return FilterResult(s.name, funnel, comments_joined=flags.joined, nsfw_files=len(nsfw_files or []),
                            unjoined_comments=counts["unjoined_comments"])
