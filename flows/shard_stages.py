"""Per-shard build steps as plain functions over paths (no Prefect here; flows/sharded.py wires them).

filter_shard (parallel): parse + comment join + stateless filters -> posts.parquet, quarantine-ingest.parquet,
    nsfw-submissions.txt (comment dumps' shards run after, with every submission shard's ids), and the
    stateful filters' per-post work: dup-keys.parquet, near-signatures.npy (MinHash of each kept post)
    and near-bands.parquet (its LSH band keys)
dedupe_shards (flows/shard_dedupe.py; sequential, shard order): stateful filters -> dropped rows,
    quarantine-dedupe.parquet
extract_shard (parallel): disclosures on kept posts -> examples.parquet, disclosures.parquet, ...
Each step skips a shard whose marker exists, and returns the counts its marker holds.
"""
from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TextIO

from extractors.disclosures import DisclosureExtractor
import numpy as np

from filters.base import run_filters
from filters.duplicate_index import KEYS, KEYS_FILE
from filters.near_index import BANDS_FILE, write_bands
from filters.pii import scrub_post
from filters.reddit import filters_from_config
from flows.shard_dedupe import NEAR_SIGNATURES, indexed_filters, near_duplicates, split_chain
from flows.shards import Shard, commit, read_marker, shard_lines, timed, tmp_name, write_marker
from flows.stages import _quarantine_row, load_saved_recipe, write_extraction
from flows.worker_memory import hand_back_memory
from schemas.funnel import Funnel
from schemas.records import QUARANTINE, RAW_POSTS, RawPost
from sources.dumps import parse_line
from sources.join import SubmissionFlags, flagged_id, join_comments
from warehouse.parquet import ParquetSink, iter_tuples

_EXTRACTORS: dict[tuple[int, str], DisclosureExtractor] = {}
NSFW_IDS = "nsfw-submissions.txt"  # ids of the shard's NSFW submissions, one a line, for the comment join
# What extraction (extractors/examples.py) and its quarantine rows read of a kept post: half the
# cost of converting whole rows, for every post of a shard.
EXTRACT_COLUMNS = ["id", "text", "subreddit", "created_utc", "source_file", "source_line"]


def _extractor(batch_size: int, forms: str) -> DisclosureExtractor:
    """One extractor (spaCy model) per worker process and setting, reused by every shard it runs."""
    if (batch_size, forms) not in _EXTRACTORS:
        hand_back_memory()  # what filtering and dedupe left behind, before the model comes in
        _EXTRACTORS[batch_size, forms] = DisclosureExtractor(batch_size=batch_size, forms=forms)
        freeze_long_lived()
    return _EXTRACTORS[batch_size, forms]


def freeze_long_lived() -> None:
    """Exempt what lives as long as the process (the spaCy model: ~160k objects) from garbage
    collection; each full collection during extraction otherwise re-scans it (~7 % of the pass)."""
    gc.collect()
    gc.freeze()


def nsfw_id_files(shards: list[dict[str, Any]]) -> list[str]:
    """The non-empty NSFW-id files of finished shards (a parent run built before the join has none)."""
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


def needs_join(done: dict[str, Any], nsfw_files: list[str] | None) -> bool:
    """A filtered shard is redone only if it has comments that more NSFW-id files could flag."""
    return done.get("unjoined_comments", 0) > 0 and done.get("nsfw_files", 0) < len(nsfw_files or [])


def filter_shard(shard: dict[str, Any], recipe_path: str, nsfw_files: list[str] | None = None) -> dict[str, Any]:
    """Parse a shard's lines, join comments to NSFW submissions (of this shard and of `nsfw_files`,
    written by earlier shards) and apply the stateless filters; malformed lines are quarantined."""
    s = Shard.from_dict(shard)
    done = read_marker(s.path, "filter")
    if done is not None and not needs_join(done, nsfw_files):
        return {**done, "skipped": True}
    started = time.perf_counter()
    recipe = load_saved_recipe(recipe_path)
    stateless, stateful = split_chain(filters_from_config(recipe.filters))
    dup, near = indexed_filters(stateful) or (None, near_duplicates(stateful))
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
    with open(tmp_name(ids_path), "w") as ids, ExitStack() as stack:
        keys = stack.enter_context(ParquetSink(tmp_name(keys_path), KEYS)) if dup else None
        records = (parse_line(line, s.source_file, n, "dump") for n, line in shard_lines(s) if line.strip())
        counts = {"unjoined_comments": 0}
        records = _counting_unjoined(join_comments(_noting(records, ids), flags), counts)
        with ParquetSink(tmp_name(posts_path), RAW_POSTS) as posts, \
             ParquetSink(tmp_name(quarantine_path), QUARANTINE) as dropped:
            for post in run_filters(records, stateless, funnel,
                                    lambda r, why: dropped.write(_quarantine_row("ingest", r, why))):
                if recipe.filters.scrub_pii:
                    post = scrub_post(post)
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
    result = timed({"shard": s.name, "funnel": funnel.to_dict(), "comments_joined": flags.joined,
                     "nsfw_files": len(nsfw_files or []), **counts}, started)
    write_marker(s.path, "filter", result)
    return {**result, "skipped": False}


def kept_posts(shard: Shard) -> Iterator[RawPost]:
    """The shard's posts that passed every filter (posts.parquet minus the rows dedupe dropped),
    with the fields extraction reads (EXTRACT_COLUMNS); the others keep their defaults."""
    done = read_marker(shard.path, "dedupe")
    if done is None:
        raise RuntimeError(f"{shard.path}: dedupe has not finished for this shard")
    dropped = set(done["dropped_rows"])
    for row, values in enumerate(iter_tuples(shard.path / "posts.parquet", EXTRACT_COLUMNS)):
        if row not in dropped:
            post_id, text, subreddit, created_utc, source_file, source_line = values  # EXTRACT_COLUMNS
            yield RawPost(id=post_id, text=text, subreddit=subreddit, created_utc=created_utc,
                          source_file=source_file, source_line=source_line)


def extract_shard(shard: dict[str, Any], recipe_path: str) -> dict[str, Any]:
    """Find disclosures in a shard's kept posts and write its examples; drops are quarantined."""
    s = Shard.from_dict(shard)
    done = read_marker(s.labels_dir, "extract")
    if done is not None:
        return {**done, "skipped": True}
    started = time.perf_counter()
    recipe = load_saved_recipe(recipe_path)
    extractor = _extractor(recipe.extract.batch_size, recipe.extract.forms)
    funnel = Funnel()
    s.labels_dir.mkdir(parents=True, exist_ok=True)
    out = {name: s.labels_dir / f"{name}.parquet" for name in ("examples", "disclosures", "quarantine-extract")}
    posts = kept_posts(s)
    collapser = write_extraction(posts, extractor, recipe, funnel, tmp_name(out["examples"]),
                                 tmp_name(out["disclosures"]), tmp_name(out["quarantine-extract"]))
    funnel.check(f"extract {s.name}")
    commit(list(out.values()))
    result = timed({"shard": s.name, "funnel": funnel.to_dict(), "unmapped": collapser.summary()}, started)
    write_marker(s.labels_dir, "extract", result)
    return {**result, "skipped": False}
