"""Per-shard build steps as plain functions over paths (no Prefect here; flows/sharded.py wires them).

filter_shard (parallel): parse + comment join + stateless filters -> posts.parquet, quarantine-ingest.parquet,
    nsfw-submissions.txt (comment dumps' shards run after, with every submission shard's ids), and the
    stateful filters' per-post work: dup-keys.parquet, near-signatures.npy (MinHash of each kept post)
dedupe_shards (sequential, shard order): stateful filters -> dropped rows, quarantine-dedupe.parquet
extract_shard (parallel): disclosures on kept posts -> examples.parquet, disclosures.parquet, ...
Each step skips a shard whose marker exists, and returns the counts its marker holds.
"""
from __future__ import annotations

import gc
import shutil
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TextIO

from extractors.disclosures import DisclosureExtractor
import numpy as np
import pyarrow.parquet as pq

from filters.base import Filter, run_filters
from filters.duplicate_index import KEYS, KEYS_FILE, repeated_rows
from filters.near_duplicates import NearDuplicateFilter
from filters.pii import scrub_post
from filters.reddit import ExactDuplicateFilter, filters_from_config
from flows.shards import Shard, commit, read_marker, shard_lines, tmp_name, write_marker
from flows.stages import _quarantine_row, load_saved_recipe, write_extraction
from schemas.funnel import Funnel
from schemas.records import QUARANTINE, RAW_POSTS, RawPost
from sources.dumps import parse_line
from sources.join import SubmissionFlags, flagged_id, join_comments
from warehouse.parquet import ParquetSink, iter_rows, iter_tuples

_EXTRACTORS: dict[tuple[int, str], DisclosureExtractor] = {}
NSFW_IDS = "nsfw-submissions.txt"  # ids of the shard's NSFW submissions, one a line, for the comment join
# MinHash signature (uint32 x num_perm) of every kept post, row-aligned with posts.parquet: computing
# it is most of the near-duplicate filter's cost (~0.3 ms a post), done here in parallel so the
# in-order dedupe only looks up LSH bands
NEAR_SIGNATURES = "near-signatures.npy"
# What the stateful filters (duplicates: the text) and their quarantine rows read of a post;
# reading only these keeps the sequential dedupe pass cheap.
DEDUPE_COLUMNS = ["id", "text", "source_file", "source_line"]
# What extraction (extractors/examples.py) and its quarantine rows read of a kept post: half the
# cost of converting whole rows, for every post of a shard.
EXTRACT_COLUMNS = ["id", "text", "subreddit", "created_utc", "source_file", "source_line"]


def is_stateful(f: Filter) -> bool:
    """Filters that remember earlier records (duplicates) must see every shard in order."""
    return bool(getattr(f, "stateful", False))


def split_chain(chain: list[Filter]) -> tuple[list[Filter], list[Filter]]:
    return [f for f in chain if not is_stateful(f)], [f for f in chain if is_stateful(f)]


def near_duplicates(stateful: list[Filter]) -> NearDuplicateFilter | None:
    return next((f for f in stateful if isinstance(f, NearDuplicateFilter)), None)


def near_signatures(shard: Shard, near: NearDuplicateFilter | None) -> np.ndarray | None:
    """The shard's precomputed signatures (memory-mapped), or None without a near-duplicate filter
    or for a shard filtered before they were written (dedupe then computes them from the text)."""
    path = shard.path / NEAR_SIGNATURES
    if near is None or not path.exists():
        return None
    sigs = np.load(path, mmap_mode="r")
    rows = pq.ParquetFile(shard.path / "posts.parquet").metadata.num_rows
    if sigs.shape != (rows, near.num_perm) or sigs.dtype != np.uint32:
        raise ValueError(f"{path}: signatures of shape {sigs.shape} {sigs.dtype} do not match {rows} kept posts "
                         f"x {near.num_perm} permutations; delete the shard's filter.done to redo it")
    return sigs


def first_objection(stateful: list[Filter], post: RawPost, near: NearDuplicateFilter | None,
                    sig: np.ndarray | None) -> str | None:
    """The reason of the first stateful filter that drops `post` (None: kept); the near-duplicate
    filter uses the precomputed signature when there is one."""
    for f in stateful:
        reason = f.check_signature(np.array(sig)) if f is near and sig is not None else f.check(post)
        if reason is not None:
            return reason
    return None


def indexed_duplicates(stateful: list[Filter]) -> ExactDuplicateFilter | None:
    """The exact-duplicate filter when it is the only stateful one: its keys are then written per
    shard and the dedupe step runs as one DuckDB query (filters/duplicate_index.py)."""
    return stateful[0] if len(stateful) == 1 and isinstance(stateful[0], ExactDuplicateFilter) else None


def _extractor(batch_size: int, forms: str) -> DisclosureExtractor:
    """One extractor (spaCy model) per worker process and setting, reused by every shard it runs."""
    if (batch_size, forms) not in _EXTRACTORS:
        _EXTRACTORS[batch_size, forms] = DisclosureExtractor(batch_size=batch_size, forms=forms)
        freeze_long_lived()
    return _EXTRACTORS[batch_size, forms]


def freeze_long_lived() -> None:
    """Exempt what lives as long as the process (the spaCy model: ~160k objects) from garbage
    collection; each full collection during extraction otherwise re-scans it (~7 % of the pass)."""
    gc.collect()
    gc.freeze()


def _timed(result: dict[str, Any], started: float) -> dict[str, Any]:
    return {**result, "seconds": round(time.perf_counter() - started, 3)}


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
    dup = indexed_duplicates(stateful)
    near = near_duplicates(stateful)
    flags = SubmissionFlags()
    for f in nsfw_files or []:
        with open(f) as fh:
            flags.add_ids(line.rstrip("\n") for line in fh)
    funnel = Funnel()
    posts_path, quarantine_path = s.path / "posts.parquet", s.path / "quarantine-ingest.parquet"
    ids_path, keys_path = s.path / NSFW_IDS, s.path / KEYS_FILE
    sigs_path = s.path / NEAR_SIGNATURES
    outputs = [posts_path, quarantine_path, ids_path] + ([keys_path] if dup else []) + ([sigs_path] if near else [])
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
        np.save(tmp_name(sigs_path), np.array(sigs, dtype=np.uint32).reshape(len(sigs), near.num_perm))
    funnel.check(f"filter {s.name}")
    commit(outputs)
    result = _timed({"shard": s.name, "funnel": funnel.to_dict(), "comments_joined": flags.joined,
                     "nsfw_files": len(nsfw_files or []), **counts}, started)
    write_marker(s.path, "filter", result)
    return {**result, "skipped": False}


def dedupe_shards(shards: list[dict[str, Any]], recipe_path: str) -> list[dict[str, Any]]:
    """Apply the stateful filters to every shard in order; finished shards are replayed (no writes)
    so the filters' memory is the same as in an uninterrupted run. A shard's marker lists the rows
    of its posts.parquet that were dropped (no copy of the kept posts is written)."""
    recipe = load_saved_recipe(recipe_path)
    _, stateful = split_chain(filters_from_config(recipe.filters))
    dup = indexed_duplicates(stateful)
    if dup is not None and all((Path(d["path"]) / KEYS_FILE).exists() for d in shards):
        return _dedupe_by_index(shards, dup.name)
    near = near_duplicates(stateful)
    results = []
    for d in shards:
        s = Shard.from_dict(d)
        done = read_marker(s.path, "dedupe")
        posts = (RawPost(**row) for row in iter_rows(s.path / "posts.parquet", DEDUPE_COLUMNS))
        sigs = near_signatures(s, near)
        if done is not None:
            for row, post in enumerate(posts):
                first_objection(stateful, post, near, None if sigs is None else sigs[row])
            results.append({**done, "skipped": True})
            continue
        started = time.perf_counter()
        funnel, dropped_rows = Funnel(), []
        quarantine_path = s.path / "quarantine-dedupe.parquet"
        with ParquetSink(tmp_name(quarantine_path), QUARANTINE) as dropped:
            for row, post in enumerate(posts):
                funnel.read += 1
                reason = first_objection(stateful, post, near, None if sigs is None else sigs[row])
                if reason is None:
                    funnel.kept += 1
                else:
                    funnel.drop(reason)
                    dropped_rows.append(row)
                    dropped.write(_quarantine_row("ingest", post, reason))
        results.append(_finish_dedupe(s, funnel, dropped_rows, quarantine_path, started))
    return results


def _finish_dedupe(s: Shard, funnel: Funnel, dropped_rows: list[int], quarantine_path: Path,
                   started: float) -> dict[str, Any]:
    """Check the shard's funnel, put its quarantine file in place and write its marker."""
    funnel.check(f"dedupe {s.name}")
    commit([quarantine_path])
    result = _timed({"shard": s.name, "funnel": funnel.to_dict(), "dropped_rows": dropped_rows}, started)
    write_marker(s.path, "dedupe", result)
    return {**result, "skipped": False}


def _dedupe_by_index(shards: list[dict[str, Any]], reason: str) -> list[dict[str, Any]]:
    """Exact duplicates of all shards at once from their key files (same drops as the in-order
    filter, memory bounded by DuckDB's limit); writes the markers of unfinished shards."""
    todo = [read_marker(Path(d["path"]), "dedupe") is None for d in shards]
    repeats = {}
    if any(todo):
        spill = Path(shards[-1]["path"]).parent.parent / "dedupe-spill"  # <run>/, beside shards/
        repeats = repeated_rows([Path(d["path"]) / KEYS_FILE for d in shards], spill)
        shutil.rmtree(spill, ignore_errors=True)
    results = []
    for k, (d, pending) in enumerate(zip(shards, todo)):
        s = Shard.from_dict(d)
        if not pending:
            results.append({**read_marker(s.path, "dedupe"), "skipped": True})
            continue
        started = time.perf_counter()
        posts_file = s.path / "posts.parquet"
        rows = repeats.get(k, [])
        total = pq.ParquetFile(posts_file).metadata.num_rows
        funnel = Funnel(read=total, kept=total - len(rows))
        quarantine_path = s.path / "quarantine-dedupe.parquet"
        with ParquetSink(tmp_name(quarantine_path), QUARANTINE) as dropped:
            if rows:
                funnel.dropped[reason] = len(rows)
                table = pq.read_table(posts_file, columns=DEDUPE_COLUMNS).take(rows)
                for row in table.to_pylist():
                    dropped.write(_quarantine_row("ingest", RawPost(**row), reason))
        results.append(_finish_dedupe(s, funnel, rows, quarantine_path, started))
    return results


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
    result = _timed({"shard": s.name, "funnel": funnel.to_dict(), "unmapped": collapser.summary()}, started)
    write_marker(s.labels_dir, "extract", result)
    return {**result, "skipped": False}
