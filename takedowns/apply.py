"""`express takedown apply`: the ledger honoured in every file of the warehouse.

In order, each step safe to interrupt and to run again (a rerun finishes what a kill left):
1. resolve: the taken-down authors' posts and fingerprints of every taken-down text enter the
   ledger (takedowns/resolve.py), before any text is removed;
2. build work: each run's shards, re-derived labels and assembled tables, and its quarantine, as
   if the posts had been dropped at read (takedowns/shards.py); a run a build holds is left;
3. the rest that is not a release: review items and ledger, evaluation runs, cached answers, the
   inputs the warehouse stores, refused gate results (takedowns/scrub.py, takedowns/evaluations.py);
4. publish: a dataset whose latest release holds a taken-down post gets the next version without
   those rows, through the caller's publisher (a build's, gate included: flows/takedown.py);
5. withdraw: each release still holding such rows gets its withdrawn sidecar, and every withdrawn
   release's sidecar names the dataset's latest release as its successor;
6. reports and cards of withdrawn releases become notices; their successors get theirs;
7. purge, when asked: the withdrawn releases' data files and gate results are deleted;
8. copies outside the warehouse that the project wrote (warehouse/ledgers/exports.py) and that still hold a
   taken-down post are named: they are the user's to delete.
Purged releases are read by their manifest and sidecar alone: their files are gone.
"""
from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from typing import Any

from common.batches import now
from common.files import finish_commits, remove_temps, write_json
from common.locking import LockTimeout, file_lock
from common.matching.takedowns import TakedownMatcher
from takedowns.release import rows_taken_down
from takedowns.shards import scrub_folder, scrub_run_tables
from takedowns.docs import rewrite_docs
from takedowns.evaluations import scrub_evaluation
from takedowns.outside import outside_hits
from takedowns.resolve import resolve
from takedowns.scrub import scrub_tree
from warehouse.layout import ReleasePaths, RunPaths, Warehouse
from warehouse.releases.release import Release
from warehouse.ledgers.takedowns import TakedownSet
from warehouse.ledgers.withdrawn import purge, withdraw, withdrawal

Publisher = Callable[[Release, TakedownSet], str]  # the parent release -> the new release's id


@dataclass
class Applied:
    """What an apply did."""

    posts: int = 0
    authors: int = 0
    ledger_version: int = 0
    build_folders: int = 0  # shard, labels and run folders rewritten
    busy_runs: list[str] = field(default_factory=list)  # held by a running build: left for the next apply
    files: dict[str, str] = field(default_factory=dict)  # other files: rewritten or deleted
    evaluation_rows: int = 0
    published: dict[str, str] = field(default_factory=dict)  # parent release -> its next version
    withdrawn: dict[str, dict[str, Any]] = field(default_factory=dict)
    purged: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # withdrawn releases whose files stay
    docs: list[str] = field(default_factory=list)
    outside: dict[str, str] = field(default_factory=dict)  # copies outside the warehouse still holding one

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def apply_takedowns(wh: Warehouse, publish: Publisher, purge_releases: bool = False) -> Applied:
    """Apply the whole ledger to the warehouse: one apply at a time, and none while a dataset is
    rebuilt (a rebuild rewrites the shards it reuses as apply does)."""
    with ExitStack() as held:
        held.enter_context(file_lock(wh.takedowns.apply_lock, timeout=0, holder="another express takedown apply"))
        for dataset in _datasets(wh):
            held.enter_context(file_lock(wh.rebuild_lock(dataset), timeout=0, holder=f"a rebuild of {dataset}"))
        return _apply(wh, publish, purge_releases)


def _apply(wh: Warehouse, publish: Publisher, purge_releases: bool) -> Applied:
    """The steps above, in order (the locks held)."""
    finish_commits(wh.runs)  # a rewrite a kill interrupted is finished first
    taken = resolve(wh)
    out = Applied(len(taken.posts), len(taken.authors), taken.version)
    if not taken:
        return out
    matcher = taken.matcher()
    _build_work(wh, matcher, out)
    _other_files(wh, matcher, taken.version, out)
    _publish_next(wh, taken, publish, out)
    _withdraw(wh, taken, out)
    out.docs = rewrite_docs(wh, out.withdrawn)
    for area in (wh.root / "reports", wh.root / "cards"):
        out.files |= scrub_tree(area, matcher)
    for release_id, record in sorted(out.withdrawn.items()):
        if purge_releases and not record.get("purged"):
            with file_lock(wh.lock_path(release_id.split("/")[0])):  # its sidecar is in the dataset's folder
                purge(wh, wh.find_release(release_id))
            out.purged.append(release_id)
        elif not record.get("purged"):
            out.kept.append(release_id)
    _remove_unpublished(wh)
    out.outside = {str(p): where for p, where in outside_hits(wh, matcher)}
    write_json(wh.takedowns.applied, {**taken.state(), "digest": taken.digest, "time": now()})
    return out


def _build_work(wh: Warehouse, matcher: TakedownMatcher, out: Applied) -> None:
    runs = sorted(p for p in wh.runs.iterdir() if p.is_dir()) if wh.runs.is_dir() else []
    for run_dir in runs:
        run = RunPaths(run_dir)
        try:
            with file_lock(run.lock, timeout=0, holder=f"a build of run {run_dir.name}"):
                remove_temps(run_dir, deep=True)  # what a killed step or scrub left unrenamed: it may hold text
                for folder in sorted(p for pat in ("shards/*", "relabel/*") for p in run_dir.glob(pat) if p.is_dir()):
                    out.build_folders += scrub_folder(folder, matcher)[0]
                out.build_folders += scrub_run_tables(run, wh.quarantine_dir(run_dir.name), matcher)
        except LockTimeout:
            out.busy_runs.append(run_dir.name)


def _other_files(wh: Warehouse, matcher: TakedownMatcher, ledger_version: int, out: Applied) -> None:
    runs = {p.name for p in wh.runs.iterdir()} if wh.runs.is_dir() else set()
    for q in sorted((wh.root / "quarantine").glob("*")):
        if q.name not in runs:  # a run deleted since: its quarantine has no funnel left to keep
            out.files |= scrub_tree(q, matcher)
    for run_dir in sorted(wh.evaluations.glob("*")):
        out.evaluation_rows += scrub_evaluation(run_dir, matcher, ledger_version)
    for area in (wh.reviews, wh.evaluations, wh.root / "inputs", wh.root / "rejected"):
        out.files |= scrub_tree(area, matcher)
    out.files |= scrub_tree(wh.response_cache, matcher, delete=True)


def _datasets(wh: Warehouse) -> list[str]:
    return sorted({r.root.parent.name for r in wh.releases()})


def _publish_next(wh: Warehouse, taken: TakedownSet, publish: Publisher, out: Applied) -> None:
    for dataset in _datasets(wh):
        latest = wh.release_dir(dataset, wh.versions(dataset)[-1])
        if withdrawal(latest) is None and rows_taken_down(Release.at(latest), taken):
            release = Release.at(latest)
            out.published[release.release_id] = publish(release, taken)


def _withdraw(wh: Warehouse, taken: TakedownSet, out: Applied) -> None:
    """Withdraw each release holding taken-down rows; every withdrawn release's record names the
    latest release as its successor and counts what the whole ledger took from it (a purged
    release's files are gone: its counts stay as they were)."""
    for dataset in _datasets(wh):
        with file_lock(wh.lock_path(dataset)):  # the sidecars are written in the dataset's folder
            _withdraw_dataset(wh, dataset, taken, out)


def _withdraw_dataset(wh: Warehouse, dataset: str, taken: TakedownSet, out: Applied) -> None:
    versions = wh.versions(dataset)
    latest = f"{dataset}/{versions[-1]}"
    for version in versions:
        path, release_id = wh.release_dir(dataset, version), f"{dataset}/{version}"
        record = withdrawal(path)
        if record is not None and record.get("purged"):
            if record.get("successor") != latest:
                withdraw(path, record := {**record, "successor": latest, "time": now()})
            out.withdrawn[release_id] = record
            continue
        rows = rows_taken_down(Release.at(path), taken) if ReleasePaths(path).data.is_dir() else {}
        if (rows or record is not None) and release_id != latest:
            counted = {"rows": sum(map(len, rows.values())), "posts": len({p for ids in rows.values() for p in ids})}
            fresh = {"successor": latest, **counted, "ledger_version": taken.version}
            if record is None or any(record.get(k) != v for k, v in fresh.items()):
                withdraw(path, {**(record or {}), **fresh, "time": now()})
        if (record := withdrawal(path)) is not None:
            out.withdrawn[release_id] = record


def _remove_unpublished(wh: Warehouse) -> None:
    """What a killed publisher (a release folder) or withdrawal left unrenamed, under the dataset's lock."""
    for dataset in _datasets(wh):
        with file_lock(wh.lock_path(dataset)):
            remove_temps(wh.dataset_dir(dataset))
