"""Planning an incremental (scheduled) rebuild: which inputs the latest release has not read, and
whether its stored shards can be reused as they are or need their labels re-derived.

Posts already filtered for the parent are reused from its run's shards (`posts.parquet`); they are
replayed through dedupe so a repost in a new dump is still caught as a duplicate.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from common.checksums import sha256_file
from common.files import write_json
from common.versioning import code_version
from pipeline.assemble import AssembleStep
from pipeline.results import AssembleResult
from pipeline.run import derive_run_id, input_fingerprint, input_record, takedown_part
from pipeline.shards import Shard
from pipeline.steps import read_marker
from review.build import review_state
from schemas.config import ConfigError, Recipe, recipe_from_dict
from schemas.lexicon import data_versions
from warehouse.releases.integrity import read_manifest
from warehouse.layout import Warehouse
from warehouse.ledgers.takedowns import takedown_state


@dataclass
class RebuildPlan:
    """What a rebuild reads and reuses; `run_id` is None when the latest release is up to date."""

    run_id: str | None
    new_inputs: list[str]
    hashes: dict[str, str]
    prior_shards: list[Shard] = field(default_factory=list)
    prior_inputs: list[dict[str, Any]] = field(default_factory=list)
    extra_manifest: dict[str, Any] | None = None
    parent: str | None = None
    relabel: list[str] = field(default_factory=list)
    message: str = ""
    review: dict[str, Any] | None = None  # the ledger state the run applies (review/build.py)
    takedowns: dict[str, Any] | None = None  # the takedown ledger state it honours (warehouse/ledgers/takedowns.py)


def input_hashes(wh: Warehouse, paths: list[str]) -> dict[str, str]:
    """The sha256 of each input, from the warehouse's memo when the file is unchanged (path, size,
    mtime), else read once and remembered."""
    memo_path = wh.input_hashes
    memo = json.loads(memo_path.read_text()) if memo_path.exists() else {}
    out = {}
    for p in paths:
        key = input_fingerprint(p)
        out[p] = memo.get(key) or sha256_file(p)
        memo[key] = out[p]
    write_json(memo_path, memo, indent=1, sort_keys=True)
    return out


def latest_manifest(wh: Warehouse, dataset: str) -> dict[str, Any] | None:
    versions = wh.versions(dataset)
    if not versions:
        return None
    return read_manifest(wh.release_dir(dataset, versions[-1]))


def labels_changed(parent: dict[str, Any], recipe_dict: dict[str, Any], review: dict[str, Any] | None = None) -> list[str]:
    """Why the parent's labels cannot be reused (code, lexicon, decomposition, extract config or
    review decisions)."""
    versions = data_versions()
    why = []
    if (parent.get("review") or {}).get("ledger_sha256", "") != (review or {}).get("sha256", ""):
        why.append("review decisions")
    if parent.get("code_version") != code_version():
        why.append("code_version")
    if parent.get("lexicon_version") != versions["lexicon"]["version"]:
        why.append("lexicon_version")
    if parent.get("decomposition_version") != versions["decomposition"]["version"]:
        why.append("decomposition_version")
    if parent.get("config", {}).get("extract") != recipe_dict["extract"]:
        why.append("extract config")
    return why


def made_alike(recorded: dict[str, Any], recipe: Recipe) -> bool:
    """Were a parent's stored shards filtered and scrubbed as `recipe` asks? Its recorded recipe is
    read as any recipe is: keys at their old place moved (older releases), keys added since at their
    defaults (which keep the old behaviour)."""
    try:
        parent = recipe_from_dict(recorded, "the parent's manifest").to_dict()
    except ConfigError:  # a key this code no longer knows
        return False
    return all(parent[s] == recipe.to_dict()[s] for s in ("filters", "privacy"))


def plan_rebuild(wh: Warehouse, recipe: Recipe, files: list[str], shard_lines: int) -> RebuildPlan:
    """Compare the inputs with the latest release of the recipe's dataset and plan the run."""
    rd = recipe.to_dict()
    hashes = input_hashes(wh, files)
    review = review_state(wh, recipe.dataset.name)
    takedowns = takedown_state(wh)
    parent = latest_manifest(wh, recipe.dataset.name)
    parent_run = read_marker(wh.run_dir(parent["run_id"]), AssembleStep.name) if parent else None
    reusable = bool(parent_run and parent_run.get("shard_list")) and made_alike(parent["config"], recipe)
    if parent and not reusable:
        print(f"[rebuild] parent {parent['dataset']}/{parent['version']} cannot be extended (filters or privacy "
              "changed, or its run folder is gone): full build", flush=True)
    known = {i["sha256"] for i in parent["inputs"]} if reusable else set()
    new = [p for p in files if hashes[p] not in known]
    relabel = labels_changed(parent, rd, review) if reusable else []
    parent_id = f"{parent['dataset']}/{parent['version']}" if parent else None
    if reusable and not new and not relabel:
        return RebuildPlan(None, [], hashes, parent=parent_id,
                           message=f"up to date: {parent_id} already has these inputs and rules")
    run_id = derive_run_id("rebuild", parent["run_id"] if reusable else "", json.dumps(rd, sort_keys=True),
                           str(shard_lines), (review or {}).get("sha256", ""), *[hashes[p] for p in new],
                           *takedown_part(takedowns))
    prior = list(AssembleResult.from_marker(parent_run).shard_list) if reusable else []
    if relabel:
        run = wh.run(run_id)
        prior = [s.relabelled(run.relabel_dir(k, s.name)) for k, s in enumerate(prior)]
    extra = None
    if reusable:
        extra = {"parent": parent_id,
                 "incremental": {"new_inputs": [input_record(p, hashes[p]) for p in new],
                                 "reused_shards": len(prior), "relabelled_because": relabel}}
    return RebuildPlan(run_id, new, hashes, prior, parent["inputs"] if reusable else [], extra,
                       parent_id if reusable else None, relabel, review=review, takedowns=takedowns)
