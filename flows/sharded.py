"""The sharded, resumable build flow: split -> filter (parallel) -> dedupe (in order) ->
extract (parallel) -> assemble -> publish. It only wires plain functions from flows/shards.py,
flows/shard_stages.py and flows/assemble.py, passing paths and small dicts.

The run id is derived from the inputs (path, size, mtime), the recipe, the shard size and the code
version, so running the same command again after a kill resumes the same run.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed, wait
from prefect.runtime import flow_run as prefect_run

from flows import assemble, caching, shard_dedupe, shard_stages, shards, stages
from flows.progress import Progress
from schemas.config import Recipe, load_recipe
from schemas.versioning import code_version
from sources.join import is_comment_input, order_inputs
from warehouse.layout import Warehouse
from warehouse.locking import file_lock

DEFAULT_SHARD_LINES = 50_000

split_task = task(shards.split_input, name="split-input", retries=2, retry_delay_seconds=5,
                  cache_key_fn=caching.split_cache_key)
filter_task = task(shard_stages.filter_shard, name="filter-shard", retries=1,
                   cache_key_fn=caching.shard_cache_key)
dedupe_task = task(shard_dedupe.dedupe_shards, name="dedupe-shards", cache_policy=NO_CACHE)
extract_task = task(shard_stages.extract_shard, name="extract-shard", retries=1,
                    cache_key_fn=caching.shard_cache_key)
assemble_task = task(assemble.assemble, name="assemble", cache_policy=NO_CACHE)
publish_task = task(assemble.publish_run, name="publish-run", retries=2, retry_delay_seconds=2,
                    cache_policy=NO_CACHE)


def derive_run_id(inputs: list[str], recipe: dict[str, Any], shard_lines: int) -> str:
    """Same inputs (path, size, mtime), recipe, shard size and code version -> same run id."""
    h = hashlib.sha256()
    for p in inputs:
        st = Path(p).stat()
        h.update(f"{Path(p).resolve()}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    h.update(json.dumps(recipe, sort_keys=True).encode())
    h.update(f"|{shard_lines}|{code_version()}".encode())
    return f"sharded-{h.hexdigest()[:16]}"


def _run_parallel(step: str, submitted: list[Any]) -> list[dict[str, Any]]:
    """Wait for shard tasks, printing progress as each finishes; results in submission order."""
    progress = Progress(step, len(submitted))
    for fut in as_completed(submitted):
        r = fut.result()
        skipped = r.get("skipped", False) or fut.state.name == "Cached"  # marker or Prefect cache hit
        progress.update(r["funnel"]["read"], skipped, r["shard"])
    return [f.result() for f in submitted]


def _split_and_filter(inputs: list[str], shards_dir: str, stems: dict[str, str], shard_lines: int,
                      recipe_path: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Split the inputs (one task each) and, while they are being split, submit the filter task of
    each submission-dump shard as soon as it is written: filtering does not wait for the whole
    (possibly many-GB) dump to be cut. Returns the splits and the filter futures by shard path."""
    splits = [split_task.submit(p, shards_dir, stems[p], shard_lines) for p in inputs]
    streamed = {stems[p]: 0 for p in inputs if not is_comment_input(p)}  # comment shards wait for all NSFW ids
    filtering: dict[str, Any] = {}

    def submit_ready() -> None:
        for stem, count in streamed.items():
            for entry in shards.split_so_far(shards_dir, stem, count):
                filtering[entry["path"]] = filter_task.submit(entry, recipe_path)
                streamed[stem] += 1

    while wait(splits, timeout=0.25).not_done:
        submit_ready()
    done = [f.result() for f in splits]
    submit_ready()
    for sp in done:  # what was submitted early is the start of what the finished split lists
        early = streamed.get(sp["stem"], 0)  # (0 for a run split before shards had markers)
        if early > len(sp["shards"]) or [e for e in sp["shards"] if e["path"] in filtering] != sp["shards"][:early]:
            raise RuntimeError(f"{sp['input']}: the shards written while splitting differ from the split's list")
    return done, filtering


def _filter_and_join(new_shards: list[dict[str, Any]], prior_shards: list[dict[str, Any]],
                     recipe_path: str, filtering: dict[str, Any]) -> None:
    """Filter submission-dump shards in parallel (`filtering`: those already submitted while
    splitting), each joining its own comments; then, once all their NSFW ids are on disk,
    comment-dump (`RC_*`) shards and any submission-dump shard with comments that earlier shards'
    ids could flag (as `express build` would, reading in order)."""
    posts_first = [s for s in new_shards if not is_comment_input(s["source_file"])]
    comments = [s for s in new_shards if is_comment_input(s["source_file"])]
    firsts = _run_parallel("filter", [filtering.get(s["path"]) or filter_task.submit(s, recipe_path)
                                      for s in posts_first])
    earlier = [s for s in prior_shards if not is_comment_input(s["source_file"])]
    second: list[tuple[dict[str, Any], list[str]]] = []
    for s, done in zip(posts_first, firsts):
        ids = shard_stages.nsfw_id_files(earlier)
        if shard_stages.needs_join(done, ids):
            second.append((s, ids))
        earlier.append(s)
    all_ids = shard_stages.nsfw_id_files(earlier)
    second += [(s, all_ids) for s in comments]
    if second:
        _run_parallel("filter comments", [filter_task.submit(s, recipe_path, ids) for s, ids in second])


def load_any_recipe(config: str | None) -> Recipe:
    """A recipe TOML, or the `recipe.json` a run saved (to resume a run by its id alone)."""
    return stages.load_saved_recipe(config) if config and config.endswith(".json") else load_recipe(config)


def open_run(wh: Warehouse, run_id: str, recipe: Recipe, inputs: list[str], shard_lines: int) -> tuple[Path, str]:
    """Create or reopen a run folder; refuse to resume a run started with another recipe."""
    run_dir = wh.run_dir(run_id)
    facts = caching.ensure_run(run_dir, {"run_id": run_id, "inputs": [str(Path(p).resolve()) for p in inputs],
                                         "shard_lines": shard_lines, "config": recipe.to_dict()})
    if facts["shard_lines"] != shard_lines or facts["config"] != recipe.to_dict():
        raise ValueError(f"run {run_id} was started with another recipe or shard size; use a new run id")
    recipe_file = run_dir / "recipe.json"
    if not recipe_file.exists():
        stages.save_recipe(recipe, recipe_file)
    print(f"[run] {run_id} -> {run_dir}", flush=True)
    return run_dir, str(recipe_file)


def _warm_gate_imports() -> None:
    """Import Great Expectations (~4-7 s) in a background thread of this (otherwise idle) process
    while the cluster dedupes and extracts, so publishing does not wait for it; a failed import
    resurfaces in the gate. Only the modules (~175 MB) overlap with the workers, never the gate's data."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")  # as warehouse/gx_adapter.py sets it

    def load() -> None:
        try:
            import great_expectations  # noqa: F401
        except Exception:  # noqa: BLE001 - the gate imports it again and reports the error
            pass

    threading.Thread(target=load, name="warm-gx-import", daemon=True).start()


@flow(name="express-shard-work")
def shard_work_flow(run_dir: str, recipe_path: str, inputs: list[str], shard_lines: int,
                    prior_shards: list[dict[str, Any]], prior_inputs: list[dict[str, Any]],
                    warm_gate: bool = True) -> dict[str, Any]:
    """The per-shard work of a run on the task runner it is given (Dask): split, filter, dedupe,
    extract; returns the finished shards and the manifest's input entries. A flow of its own so that
    its workers (each with a spaCy model) are shut down before the run is assembled and the quality
    gate runs here: the workers and those steps never hold memory at the same time."""
    inputs = order_inputs(list(inputs))  # submissions before comments, as the unsharded ingest reads them
    shards_dir = str(Path(run_dir) / "shards")
    stems = shards.input_stems(inputs)
    splits, filtering = _split_and_filter(inputs, shards_dir, stems, shard_lines, recipe_path)
    new_shards = [s for sp in splits for s in sp["shards"]]
    all_shards = prior_shards + new_shards
    print(f"[split] {len(inputs)} new input(s) -> {len(new_shards)} shards of <= {shard_lines:,} lines"
          f"{f'; {len(prior_shards)} shards from the parent run' if prior_shards else ''}", flush=True)
    _filter_and_join(new_shards, prior_shards, recipe_path, filtering)
    dedupe = dedupe_task.submit(all_shards, recipe_path)  # on a worker: its DuckDB memory is not ours
    # queued behind the dedupe on the cluster, so they start the moment it ends, without this process
    extracts = [extract_task.submit(s, recipe_path, wait_for=[dedupe]) for s in all_shards]
    if warm_gate:  # while a worker dedupes and the other idles: publishing then starts at once
        _warm_gate_imports()
    deduped = dedupe.result()
    print(f"[dedupe] {sum(d['funnel']['read'] for d in deduped):,} posts through the stateful filters "
          f"({sum(d.get('skipped', False) for d in deduped)} shards replayed)", flush=True)
    _run_parallel("extract", extracts)
    return {"shards": all_shards,
            "inputs": prior_inputs + [stages.input_record(sp["input"], sp["sha256"]) for sp in splits]}


def run_lock(run_dir: Path, run_id: str) -> Any:
    """Held while a process builds or publishes a run: two at once would write the same shard files
    (or publish twice), so the second stops at once, naming the holder's pid. A killed holder's lock
    is released by the kernel, so resuming after kill -9 is never blocked."""
    return file_lock(run_dir / "run.lock", timeout=0, holder=f"another build of run {run_id}")


def build_run(wh: Warehouse, run_id: str, run_dir: Path, recipe_path: str, inputs: list[str], shard_lines: int,
              prior_shards: list[dict[str, Any]] | None = None, prior_inputs: list[dict[str, Any]] | None = None,
              extra_manifest: dict[str, Any] | None = None, publish: bool = True, workers: int = 2,
              dask_address: str | None = None) -> dict[str, Any]:
    """Wire one run (inside a flow): the shard work on `workers` local Dask workers (or the cluster at
    `dask_address`), then assembling and publishing here once those workers are gone. Prior shards
    (an incremental rebuild's parent) are already filtered: they are replayed through the stateful
    filters and, when their `work` folder is new, re-labelled; new inputs are split, filtered and
    labelled."""
    with run_lock(run_dir, run_id):
        runner = quiet(task_runner(workers, dask_address))
        gate = publish and stages.load_saved_recipe(recipe_path).gate.enabled
        done = shard_work_flow.with_options(task_runner=runner)(
            str(run_dir), recipe_path, list(inputs), shard_lines, prior_shards or [], prior_inputs or [], gate)
        assembled = assemble_task(done["shards"], done["inputs"], str(run_dir), str(wh.quarantine_dir(run_id)))
        print(f"[ingest]  {assembled['ingest']['funnel']}", flush=True)
        print(f"[extract] {assembled['extract']['funnel']}", flush=True)
        if extra_manifest:
            (run_dir / "manifest-extra.json").write_text(json.dumps(extra_manifest, indent=2) + "\n")
        release = None
        if publish:
            release = publish_task(str(wh.root), run_id, str(run_dir), recipe_path, assembled, extra_manifest)
            print(f"[publish] {release['dataset']}/{release['version']} -> {release['path']}", flush=True)
        return {"run_id": run_id, "release": release, "ingest": assembled["ingest"], "extract": assembled["extract"],
                "shards": assembled["shards"], "flow_run_id": str(prefect_run.id)}


@flow(name="express-sharded-build")
def sharded_build_flow(inputs: list[str], warehouse: str, config: str | None = None,
                       shard_lines: int = DEFAULT_SHARD_LINES, run_id: str | None = None,
                       publish: bool = True, workers: int = 2, dask_address: str | None = None) -> dict[str, Any]:
    """Build (and by default publish) a release from dumps in resumable shards; rerun with the
    same run id to resume; publish=False leaves publishing to `publish_flow`. The shard work runs on
    `workers` local Dask workers (0: one at a time in this process) or the cluster at `dask_address`."""
    wh = Warehouse.at(warehouse)
    recipe = load_any_recipe(config)
    run_id = run_id or derive_run_id(inputs, recipe.to_dict(), shard_lines)
    run_dir, recipe_path = open_run(wh, run_id, recipe, inputs, shard_lines)
    return build_run(wh, run_id, run_dir, recipe_path, inputs, shard_lines, publish=publish, workers=workers,
                     dask_address=dask_address)


@flow(name="express-publish")
def publish_flow(warehouse: str, run_id: str) -> dict[str, str]:
    """Publish a finished (assembled) run by id; a run that already has a release is not published twice."""
    wh = Warehouse.at(warehouse)
    run_dir = wh.run_dir(run_id)
    assembled = shards.read_marker(run_dir, "assemble")
    if assembled is None:
        raise FileNotFoundError(f"{run_dir}: run not assembled yet; finish it with build-sharded --resume {run_id}")
    extra_file = run_dir / "manifest-extra.json"
    extra = json.loads(extra_file.read_text()) if extra_file.exists() else None
    with run_lock(run_dir, run_id):
        return publish_task(str(wh.root), run_id, str(run_dir), str(run_dir / "recipe.json"), assembled, extra)


def task_runner(workers: int = 2, address: str | None = None) -> Any:
    """Dask through prefect-dask: an existing cluster at `address`, else a local one with `workers`
    single-threaded worker processes; workers=0 runs tasks one at a time in this process."""
    if address:
        from prefect_dask import DaskTaskRunner

        return DaskTaskRunner(address=address)
    if workers <= 0:
        from prefect.task_runners import ThreadPoolTaskRunner

        return ThreadPoolTaskRunner(max_workers=1)
    from prefect_dask import DaskTaskRunner

    local_worker_settings()
    return DaskTaskRunner(cluster_kwargs={"n_workers": workers, "threads_per_worker": 1, "processes": True,
                                          "dashboard_address": "127.0.0.1:0",
                                          "host": "127.0.0.1"})


# Dask's defaults for the local workers it spawns, changed (measured on a 50k-line extract shard):
# - MALLOC_TRIM_THRESHOLD_=65536 (Dask sets it so workers hand freed memory back at once) makes
#   glibc return and re-fault spaCy's per-batch arrays: 4.1 s -> 5.8 s (+40 %). Unset, glibc's own
#   adaptive threshold applies; peak RSS is still bounded by the shard (bench/scale.py measures it).
# - the statistical profiler samples every thread's stack every 10 ms, holding the GIL.
LOCAL_WORKER_CONFIG = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
                       "distributed.worker.profile.enabled": False}


def local_worker_settings() -> None:
    """Apply LOCAL_WORKER_CONFIG before a local cluster starts (its nannies read it when they spawn)."""
    import dask

    dask.config.set(LOCAL_WORKER_CONFIG)


def quiet(runner: Any) -> Any:
    """Keep Dask's INFO chatter out of the terminal so the progress lines stay readable."""
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")  # inherited by local workers
    logging.getLogger("distributed").setLevel(logging.WARNING)
    return runner


def run_sharded_build(inputs: list[str], warehouse: str, config: str | None = None,
                      shard_lines: int = DEFAULT_SHARD_LINES, run_id: str | None = None, workers: int = 2,
                      dask_address: str | None = None, publish: bool = True) -> dict[str, Any]:
    """Run the sharded build flow; its shard work runs on the chosen task runner."""
    return sharded_build_flow(inputs, warehouse, config, shard_lines, run_id, publish, workers, dask_address)
