"""The next version of a release without the rows of taken-down posts.

Its rows are the parent release's, in their order, less those rows: a takedown run
(`runs/<run-id>/`) holds them as a build's assembled run would, and the one publisher publishes it
(flows/takedown.py wires it as a build's publish, gate included). The manifest names the parent,
says how many rows left and why, and keeps the parent's facts about how its labels were made (code,
lexicon and vocabulary versions, models), since the rows are the parent's. The run's assemble
marker lists the parent's (scrubbed) shards, so a later rebuild extends the new version.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from common.checksums import sha256_file
from common.matching.takedowns import id_mask
from common.errors import UserError
from pipeline.assemble import AssembleStep
from pipeline.results import AssembleResult
from pipeline.run import derive_run_id, open_run
from pipeline.steps import Outputs, Step, read_marker
from review.build import review_state, save_review_state
from schemas.config import recipe_from_dict
from schemas.funnel import Funnel
from schemas.records import DISCLOSURES, EXAMPLES, TAKEDOWN
from warehouse.layout import RunPaths, Warehouse
from warehouse.releases.publish import taken_down_rows
from warehouse.releases.release import Release
from warehouse.ledgers.takedowns import TakedownSet, save_takedown_state, takedown_state

# What a manifest says of how its rows were made: the new version's rows are the parent's
INHERITED = ("code_version", "lexicon_version", "decomposition_version", "vocabulary_version",
             "filter_data_versions", "acceptance", "segmentation")


def rows_taken_down(release: Release, taken: TakedownSet) -> dict[str, list[str]]:
    """split -> post ids of its rows that hold a taken-down post (only splits with such rows)."""
    out = {}
    for split, path in release.split_files().items():
        ids = taken_down_rows(path, taken.posts).column("post_id").to_pylist()
        if ids:
            out[split] = ids
    return out


@dataclass(frozen=True)
class TakedownRun:
    """The unit of the step: the run folder, the parent release, the posts to leave out."""

    run: RunPaths
    parent: Path
    posts: frozenset[str]

    @property
    def name(self) -> str:
        return self.run.root.name


def open_takedown_run(wh: Warehouse, parent: Release, taken: TakedownSet) -> TakedownRun:
    """The run that republishes `parent` without `taken`'s posts: the same run for the same parent
    and takedowns, so a rerun after a kill finds it (and the release it published)."""
    m = parent.manifest()
    if "stages" not in m:
        raise UserError(f"{parent.manifest_path}: the release records no funnel; rebuild it from its dumps "
                        "(express build), which drops the taken-down posts at read")
    recipe = recipe_from_dict(m["config"], str(parent.manifest_path))
    parent_run = wh.run(m.get("run_id", ""))
    facts = json.loads(parent_run.run_file.read_text()) if parent_run.run_file.exists() else {}
    run_id = derive_run_id("takedown", parent.release_id, m.get("run_id", ""), taken.digest)
    paths = open_run(wh, run_id, recipe, facts.get("inputs", []),
                     facts.get("shard_lines", recipe.orchestrate.shard_lines))
    save_review_state(paths, review_state(wh, parent.dataset))
    save_takedown_state(paths.takedowns, takedown_state(wh))
    return TakedownRun(paths, parent.path, taken.posts)


def manifest_extra(unit: TakedownRun, taken: TakedownSet) -> dict[str, Any]:
    """What the new version's manifest says beyond a build's: its parent, what left and why."""
    parent = Release.at(unit.parent)
    m = parent.manifest()
    rows = rows_taken_down(parent, taken)
    removed = {s: len(ids) for s, ids in rows.items()}
    posts = {p for ids in rows.values() for p in ids}
    return {**{k: m[k] for k in INHERITED if k in m}, "parent": parent.release_id,
            "takedowns": {"ledger_version": taken.version, "ledger_sha256": taken.sha256, "parent": parent.release_id,
                          "rows_removed": removed, "posts_removed": len(posts),
                          "why": "rows of posts taken down (docs/takedowns.md)"}}


class TakedownStep(Step[TakedownRun, AssembleResult]):
    """Writes the run's tables from the parent release less the taken-down rows; its marker is the
    run's assemble marker."""

    name = AssembleStep.name
    result = AssembleResult

    @classmethod
    def folder(cls, unit: TakedownRun) -> Path:
        return unit.run.root

    def run(self, unit: TakedownRun, out: Outputs, **params: Any) -> AssembleResult:
        parent = Release.at(unit.parent)
        m = parent.manifest()
        wh = Warehouse.of_release(unit.parent)
        gone = _write_without(parent.split_files().values(), out(unit.run.examples), EXAMPLES, unit.posts)
        parent_run = wh.run(m.get("run_id", ""))
        if parent_run.disclosures.exists():
            _write_without([parent_run.disclosures], out(unit.run.disclosures), DISCLOSURES, unit.posts)
        else:
            pq.write_table(DISCLOSURES.empty_table(), out(unit.run.disclosures))
        ingest, extract = (Funnel.from_dict(m["stages"][s]) for s in ("ingest", "extract"))
        extract.kept -= len(gone)
        extract.dropped[TAKEDOWN] += len(gone)
        done = read_marker(parent_run.root, AssembleStep.name) or {}
        prior = AssembleResult.from_marker(done) if done else None
        return AssembleResult(ingest, extract, _inputs(wh, m["inputs"]), prior.shard_list if prior else [],
                              str(unit.run.examples), str(unit.run.disclosures),
                              prior.comments_joined if prior else 0, prior.unmapped if prior else {})


def _write_without(files: Any, out: Path, schema: pa.Schema, posts: frozenset[str]) -> set[str]:
    """Copy the rows of `files`, in order, less those of `posts`; the posts left out."""
    gone: set[str] = set()
    with pq.ParquetWriter(out, schema, compression="zstd") as writer:
        for path in files:
            for batch in pq.ParquetFile(path).iter_batches(batch_size=65_536):
                batch = pa.RecordBatch.from_arrays([batch.column(n) for n in schema.names], schema=schema)
                mask = id_mask(batch.column("post_id"), posts)
                gone |= set(batch.column("post_id").filter(mask).to_pylist())
                writer.write_batch(batch.filter(pc.invert(mask)))
    return gone


def _inputs(wh: Warehouse, inputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The parent's input entries; an input the warehouse keeps itself (inputs/) is hashed again,
    as a takedown may have rewritten it (a rebuild knows inputs by hash)."""
    out = []
    for entry in inputs:
        path = Path(entry["path"])
        if path.is_relative_to(wh.root / "inputs") and path.is_file():
            entry = {**entry, "sha256": sha256_file(path)}
        out.append(entry)
    return out

