"""The incremental (scheduled) rebuild: read only dumps that the latest release has not read (and,
for a praw recipe or `scrape=True`, only live results newer than the stored pull checkpoint),
re-derive labels of the stored raw posts when the rules or vocabulary changed, and publish a new
version whose manifest names its parent.

Posts already filtered for the parent are reused from its run's shards (`posts.parquet`); they are
replayed through the stateful filters so a repost in a new dump is still caught as a duplicate.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows.caching import digest
from flows.sharded import DEFAULT_SHARD_LINES, build_run, load_any_recipe, open_run
from flows.shards import read_marker
from flows.stages import input_record
from schemas.config import Recipe
from schemas.lexicon import data_versions, sha256_file
from schemas.versioning import code_version
from warehouse.layout import Warehouse
from warehouse.locking import file_lock

DUMP_PATTERNS = ("*.zst", "*.jsonl", "*.ndjson")


def expand_inputs(inputs: list[str]) -> list[str]:
    """Files as given, folders as their dump files, in a stable (sorted) order."""
    out: list[str] = []
    for p in map(Path, inputs):
        if p.is_dir():
            out.extend(sorted(str(f) for pat in DUMP_PATTERNS for f in p.glob(pat)))
        else:
            out.append(str(p))
    return sorted(dict.fromkeys(out))


def _fingerprint_key(context: Any, parameters: dict[str, Any]) -> str:
    st = Path(parameters["path"]).stat()
    return digest("sha256", str(Path(parameters["path"]).resolve()), str(st.st_size), str(st.st_mtime_ns))


def pull_praw(out_dir: str, config: str | None) -> dict[str, Any]:
    """Pull live results newer than the stored checkpoint into a new scrape file (sources/praw_pulls.py)."""
    from sources.praw_pulls import pull
    from sources.praw_source import search_terms

    cfg = load_any_recipe(config).sources
    return pull(cfg, search_terms(cfg), out_dir).to_dict()


def _retry_unless_no_credentials(task: Any, task_run: Any, state: Any) -> bool:
    """Retrying cannot bring missing credentials; a rate limit or server error may clear."""
    from sources.praw_source import MissingCredentials

    return not isinstance(state.result(raise_on_failure=False), MissingCredentials)


pull_task = task(pull_praw, name="scrape-praw-new", retries=2, retry_delay_seconds=10, cache_policy=NO_CACHE,
                 retry_condition_fn=_retry_unless_no_credentials)


@task(name="sha256-input", retries=2, retry_delay_seconds=5, cache_key_fn=_fingerprint_key)
def sha256_task(path: str) -> str:
    """The content hash of an input (cached per path, size and mtime: dumps are large)."""
    return sha256_file(Path(path))


def latest_manifest(wh: Warehouse, dataset: str) -> dict[str, Any] | None:
    versions = wh.versions(dataset)
    if not versions:
        return None
    return json.loads((wh.release_dir(dataset, versions[-1]) / "manifest.json").read_text())


def labels_changed(parent: dict[str, Any], recipe_dict: dict[str, Any]) -> list[str]:
    """Why the parent's labels cannot be reused (code, lexicon, decomposition or extract config)."""
    versions = data_versions()
    why = []
    if parent.get("code_version") != code_version():
        why.append("code_version")
    if parent.get("lexicon_version") != versions["lexicon"]["version"]:
        why.append("lexicon_version")
    if parent.get("decomposition_version") != versions["decomposition"]["version"]:
        why.append("decomposition_version")
    if parent.get("config", {}).get("extract") != recipe_dict["extract"]:
        why.append("extract config")
    return why


@flow(name="express-rebuild")
def rebuild_flow(inputs: list[str], warehouse: str, config: str | None = None,
                 shard_lines: int = DEFAULT_SHARD_LINES, scrape: bool = False, workers: int | None = None,
                 dask_address: str | None = None) -> dict[str, Any]:
    """Publish a new version from what is new since the latest release (or a first full build); a praw
    recipe (or scrape=True) first pulls live results newer than the stored checkpoint. The shard work
    runs on `workers` local Dask workers (default: the recipe's [orchestrate] workers) or `dask_address`.
    A second rebuild of the same dataset while one runs stops at once (it would read the same parent)."""
    wh = Warehouse.at(warehouse)
    recipe = load_any_recipe(config)
    name = recipe.dataset.name
    with file_lock(wh.dataset_dir(name) / ".rebuild.lock", timeout=0, holder=f"another rebuild of {name}"):
        return _rebuild(wh, recipe, inputs, config, shard_lines, scrape, workers, dask_address)


def _rebuild(wh: Warehouse, recipe: Recipe, inputs: list[str], config: str | None, shard_lines: int, scrape: bool,
             workers: int | None, dask_address: str | None) -> dict[str, Any]:
    """The rebuild's wiring, under its dataset lock."""
    rd = recipe.to_dict()
    pulled = None
    if scrape or recipe.sources.kind == "praw":
        delay = min(60.0, recipe.sources.max_backoff_seconds)
        pulled = pull_task.with_options(retry_delay_seconds=delay)(str(wh.root / "inputs" / "praw"), config)
        inputs = list(inputs) + pulled["files"]
    files = expand_inputs(inputs)
    if not files:
        raise ValueError("no inputs: give dump files or folders, or scrape (a praw recipe or --scrape) "
                         "something first")
    hashes = dict(zip(files, [f.result() for f in [sha256_task.submit(p) for p in files]]))
    parent = latest_manifest(wh, recipe.dataset.name)
    parent_run = read_marker(wh.run_dir(parent["run_id"]), "assemble") if parent else None
    reusable = parent_run is not None and "shard_list" in parent_run and parent["config"]["filters"] == rd["filters"]
    if parent and not reusable:
        print(f"[rebuild] parent {parent['dataset']}/{parent['version']} cannot be extended (filters changed or "
              "not a sharded run): full build", flush=True)
    known = {i["sha256"] for i in parent["inputs"]} if reusable else set()
    new = [p for p in files if hashes[p] not in known]
    relabel = labels_changed(parent, rd) if reusable else []
    if reusable and not new and not relabel:
        msg = f"up to date: {parent['dataset']}/{parent['version']} already has these inputs and rules"
        if pulled:
            msg += f" (praw: {pulled['new_items']} new, {pulled['skipped_seen']} skipped as already seen)"
        print(f"[rebuild] {msg}", flush=True)
        return {"message": msg, "release": None, "parent": f"{parent['dataset']}/{parent['version']}",
                "scrape": pulled}
    seed = [parent["run_id"] if reusable else "", json.dumps(rd, sort_keys=True), code_version(), str(shard_lines)]
    run_id = "rebuild-" + hashlib.sha256("|".join(seed + [hashes[p] for p in new]).encode()).hexdigest()[:16]
    run_dir, recipe_path = open_run(wh, run_id, recipe, new, shard_lines)
    prior = list(parent_run["shard_list"]) if reusable else []
    if relabel:
        print(f"[rebuild] re-deriving labels of {len(prior)} stored shards ({', '.join(relabel)} changed)", flush=True)
        prior = [{**s, "work": str(run_dir / "relabel" / f"{k:05d}-{Path(s['path']).name}")}
                 for k, s in enumerate(prior)]
    extra = None
    if reusable:
        extra = {"parent": f"{parent['dataset']}/{parent['version']}",
                 "incremental": {"new_inputs": [input_record(p, hashes[p]) for p in new],
                                 "reused_shards": len(prior), "relabelled_because": relabel}}
        if pulled:
            extra["incremental"]["scrape"] = {k: pulled[k] for k in ("path", "new_items", "rows", "skipped_seen")}
    print(f"[rebuild] {len(new)} new input(s) of {len(files)}; parent "
          f"{extra['parent'] if extra else 'none'}", flush=True)
    built = build_run(wh, run_id, run_dir, recipe_path, new, shard_lines, prior_shards=prior,
                      prior_inputs=parent["inputs"] if reusable else [], extra_manifest=extra,
                      workers=recipe.orchestrate.workers if workers is None else workers, dask_address=dask_address)
    return {**built, "scrape": pulled}


def run_rebuild(inputs: list[str], warehouse: str, config: str | None = None,
                shard_lines: int = DEFAULT_SHARD_LINES, workers: int = 2,
                dask_address: str | None = None, scrape: bool = False) -> dict[str, Any]:
    """Run the rebuild flow; its shard work runs on a local Dask cluster by default."""
    return rebuild_flow(inputs, warehouse, config, shard_lines, scrape, workers, dask_address)
