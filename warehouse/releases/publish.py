"""Publish an immutable release: split examples by post id, gate them, write to a temp folder, rename.

A release is never overwritten: a per-dataset file lock serialises publishers, the rename fails
if the version already exists, and anything that goes wrong before it (including a failed
quality gate) leaves no release behind; the temporary folder is removed.
"""
from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from common.checksums import sha256_file
from common.errors import UserError
from common.files import place_folder, remove_temps, temp_path
from common.locking import file_lock
from common.parquet import BATCH_ROWS, ParquetSink
from common.matching.takedowns import id_mask
from privacy.kinds import enabled_kinds
from schemas.config import Recipe
from schemas.records import EXAMPLES
from warehouse.releases.catalog import register_release
from warehouse.gate.result import GateResult
from warehouse.layout import ReleasePaths, Warehouse
from warehouse.releases.manifest import release_fields, write_manifest
from warehouse.releases.splits import SPLITS, split_for, splits_for_config
from warehouse.releases.release import Release


class PublishError(UserError, RuntimeError):
    """Nothing was published; the message says why."""


class GateFailed(PublishError):
    """The quality gate rejected the release; nothing was published."""

    def __init__(self, message: str, results_dir: Path | None = None):
        super().__init__(message)
        self.results_dir = results_dir


@dataclass(frozen=True)
class Checks:
    """What a release is checked with beyond its recipe's [gate]: `pii_prescans`, the gate's PII
    scans the build ran ahead (warehouse/gate/pii.py); `gate`, what runs
    warehouse.gate.suite.run_gate (the caller's process choice), by default this process;
    `taken_down`, post ids (as matched, common/matching/reddit_ids.py) no release may hold."""

    pii_prescans: Sequence[Path] = ()
    gate: Callable[..., GateResult] | None = None
    taken_down: Collection[str] = ()


@dataclass(frozen=True)
class Draft:
    """A release being written in its temporary folder, before it is renamed into place."""

    tmp: Path
    warehouse: Warehouse
    recipe: Recipe
    version: str
    parent: str | None  # the dataset's latest version before this one
    checks: Checks

    @property
    def dataset(self) -> str:
        return self.recipe.dataset.name


def publish_release(examples_path: Path, warehouse: Warehouse, recipe: Recipe, extra: dict[str, Any],
                    version: str | None = None, checks: Checks = Checks()) -> Release:
    """Write `<warehouse>/<dataset>/<version>/` (split Parquet files, gate results, manifest.json),
    the next version unless `version` names one."""
    dataset = recipe.dataset.name
    warehouse.dataset_dir(dataset).mkdir(parents=True, exist_ok=True)
    with file_lock(warehouse.lock_path(dataset)):
        remove_temps(warehouse.dataset_dir(dataset))  # what a publish killed mid-way left (we hold the lock)
        version = version or warehouse.next_version(dataset)
        final = warehouse.release_dir(dataset, version)
        if final.exists():
            raise PublishError(f"release {dataset}/{version} already exists at {final}; releases are immutable")
        existing = warehouse.versions(dataset)
        parent = existing[-1] if existing else None
        tmp = temp_path(final)
        tmp.mkdir(parents=True)
        try:
            fields = _write_release(Draft(tmp, warehouse, recipe, version, parent, checks), examples_path)
            write_manifest(tmp, fields, extra)
            for f in ReleasePaths(tmp).data.iterdir():
                f.chmod(0o444)
            try:
                place_folder(tmp, final)
            except OSError as exc:
                raise PublishError(f"release {dataset}/{version} appeared while publishing; nothing overwritten") from exc
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        release = Release(dataset, version, final)
        with file_lock(warehouse.catalog_lock):
            register_release(warehouse, dataset, version, release.split_files())
    return release


def ensure_registered(warehouse: Warehouse, release: Release) -> list[str]:
    """Idempotently (re)create a published release's catalog views, e.g. after a crash between the
    release rename and its registration; `latest` views move only if it is the newest version."""
    with file_lock(warehouse.catalog_lock):
        newest = warehouse.versions(release.dataset)[-1:] == [release.version]
        return register_release(warehouse, release.dataset, release.version, release.split_files(), latest=newest)


def _write_release(draft: Draft, examples_path: Path) -> dict[str, Any]:
    recipe, taken_down = draft.recipe, frozenset(draft.checks.taken_down)
    splits = splits_for_config(recipe.splits)
    sinks = {s: ParquetSink(ReleasePaths(draft.tmp).split_file(s), EXAMPLES) for s in splits}
    try:
        for batch in pq.ParquetFile(examples_path).iter_batches(batch_size=BATCH_ROWS):
            batch = pa.RecordBatch.from_arrays([batch.column(n) for n in EXAMPLES.names], schema=EXAMPLES)
            split = pa.array([split_for(pid, recipe.splits) for pid in batch.column("post_id").to_pylist()])
            for s in splits:  # each split keeps the examples' order
                part = batch.filter(pc.equal(split, s))
                if len(part):
                    sinks[s].write_batch(part)
    finally:
        for sink in sinks.values():
            sink.close()
    if sum(s.rows for s in sinks.values()) == 0:
        raise PublishError("no examples to publish: every post was dropped (see the funnel)")
    files = {s: sinks[s].path for s in splits}
    _refuse_taken_down(files, taken_down, f"{draft.dataset}/{draft.version}")
    summary = _run_gate(draft, files)
    if summary is not None and taken_down:
        summary["takedowns"] = {"posts_checked": len(taken_down), "rows_found": 0}
    return release_fields(recipe, draft.version, draft.parent,
                          {ReleasePaths.split_name(s): {"split": s, "rows": sinks[s].rows, "bytes": p.stat().st_size,
                                                        "sha256": sha256_file(p)}
                           for s, p in files.items()},
                          _count_masks(files), summary.get("vocabulary") if summary else _describe_vocabulary(),
                          summary)


def taken_down_rows(path: Path, taken_down: frozenset[str]) -> pa.Table:
    """The post ids of the rows of a release file that hold a taken-down post."""
    ids = pq.read_table(path, columns=["post_id"]).column("post_id")
    return pa.table({"post_id": ids}).filter(id_mask(ids, taken_down))


def _refuse_taken_down(files: dict[str, Path], taken_down: frozenset[str], release: str) -> None:
    """The gate's takedown check: a release that holds a taken-down post is refused whole."""
    if not taken_down:
        return
    hits = [pid for p in files.values() for pid in taken_down_rows(p, taken_down).column("post_id").to_pylist()]
    if hits:
        raise GateFailed(f"quality gate failed for {release}; nothing published: {len(hits)} rows hold "
                         f"{len(set(hits))} taken-down posts (e.g. {', '.join(sorted(set(hits))[:3])}); "
                         "`express takedown list` names them")


def _run_gate(draft: Draft, files: dict[str, Path]) -> dict[str, Any] | None:
    """Run the quality gate; on failure keep its results outside the release and raise GateFailed."""
    recipe, dataset, version, parent = draft.recipe, draft.dataset, draft.version, draft.parent
    if not recipe.gate.enabled:
        return None
    from warehouse.releases.stats import label_counts

    gate = draft.checks.gate
    if gate is None:
        from warehouse.gate.suite import run_gate as gate

    parent_counts = None
    if parent:
        parent_counts = (parent, label_counts(Release.at(draft.warehouse.release_dir(dataset, parent)).split_files()))
    # the gate checks the PII kinds the recipe scrubbed
    result = gate(files, recipe.gate, ReleasePaths(draft.tmp).gate, parent=parent_counts,
                  pii_kinds=enabled_kinds(recipe.privacy), pii_prescans=draft.checks.pii_prescans)
    if not result.success:
        stamp = f"{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"
        kept = draft.warehouse.rejected_dir(dataset, version, stamp)
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(ReleasePaths(draft.tmp).gate), str(kept))
        raise GateFailed(f"quality gate failed for {dataset}/{version}; nothing published "
                         f"(GX results in {kept}):\n{result.message()}", kept)
    summary = dict(result.summary)
    summary["results"] = str(ReleasePaths(draft.tmp).gate_files.results.relative_to(draft.tmp))
    return summary


def _describe_vocabulary() -> dict[str, Any]:
    from schemas.vocabulary import default_vocabulary

    return default_vocabulary().describe()


def _count_masks(files: dict[str, Path]) -> dict[str, int]:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    out = {}
    for split, path in files.items():
        col = pq.read_table(path, columns=["n_masks"]).column("n_masks")
        out[split] = int(pc.sum(col).as_py() or 0)
    return out
