"""The build flow: split -> filter (parallel) -> dedupe (in order) -> extract (parallel) ->
assemble -> publish. It wires the plain steps of pipeline/ as Prefect tasks (retries, what runs
where and when) and passes file paths and small typed results, never data.

A small input is one shard run in this process; larger ones run on local Dask workers or an
existing cluster. Every step writes a completion marker, so the same command after a kill resumes.
"""
from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed, wait
from prefect.runtime import flow_run as prefect_run
from prefect.task_runners import ThreadPoolTaskRunner

from flows.dask_runner import task_runner
from pipeline import assemble, dedupe_shards, extract_shards, filter_shards, pii_prescan, publish, shards
from pipeline.progress import Progress
from pipeline.results import AssembleResult, StepResult
from pipeline.review import review_state, save_review_state
from pipeline.run import (build_run_id, check_inputs, default_workers, expand_inputs, input_record, load_any_recipe,
                          load_saved_recipe, open_run, praw_inputs, run_lock)
from schemas.config import override
from sources.join import is_comment_input, order_inputs
from sources.dumps import DumpError
from warehouse.layout import Warehouse
from warehouse.publish import PublishError


def _retry_unless_it_cannot_heal(task: Any, task_run: Any, state: Any) -> bool:
    """A damaged dump stays damaged and a refused release (failed gate, no examples, version taken)
    is refused again: retrying those only repeats the work (a failed gate wrote one rejected folder
    per attempt); an I/O error or a lost worker may clear."""
    return not isinstance(state.result(raise_on_failure=False), (DumpError, PublishError))


split_task = task(shards.split_input, name="split-input", retries=2, retry_delay_seconds=5, cache_policy=NO_CACHE,
                  retry_condition_fn=_retry_unless_it_cannot_heal)
filter_task = task(filter_shards.filter_shard, name="filter-shard", retries=1, cache_policy=NO_CACHE)
dedupe_task = task(dedupe_shards.dedupe_shards, name="dedupe-shards", cache_policy=NO_CACHE)
extract_task = task(extract_shards.extract_shard, name="extract-shard", retries=1, cache_policy=NO_CACHE)
assemble_task = task(assemble.assemble, name="assemble", cache_policy=NO_CACHE)
publish_task = task(publish.publish_run, name="publish-run", retries=2, retry_delay_seconds=2, cache_policy=NO_CACHE,
                    retry_condition_fn=_retry_unless_it_cannot_heal)
prescan_task = task(pii_prescan.prescan_shard, name="prescan-pii", retries=1, cache_policy=NO_CACHE)
quarantine_task = task(assemble.join_ingest_quarantine, name="join-ingest-quarantine", retries=1, cache_policy=NO_CACHE)
SPLIT_THREADS = 2  # inputs split at once, beside the workers
pull_task = task(praw_inputs, name="pull-praw", retries=2, retry_delay_seconds=10, cache_policy=NO_CACHE)


def _run_parallel(step: str, submitted: list[Any], started: float | None = None,
                  then: Callable[[Any], None] | None = None) -> list[StepResult]:
    """Wait for shard tasks, printing progress as each finishes; results in submission order.
    `started`: when the tasks began (perf_counter), if before this call (filtering starts while
    the split runs), so the rate printed is records per second of the step. `then(future)` runs
    as each one finishes."""
    progress = Progress(step, len(submitted), started=time.perf_counter() if started is None else started)
    for fut in as_completed(submitted):
        r = fut.result()
        progress.update(r.funnel.read, r.skipped, r.shard)
        if then is not None:
            then(fut)
    return [f.result() for f in submitted]


def _split_and_filter(inputs: list[str], shards_dir: str, stems: dict[str, str], shard_lines: int,
                      recipe_path: str, hashes: dict[str, str]) -> tuple[list[Any], dict[str, Any]]:
    """Split the inputs (one task each) and, while they are being split, submit the filter task of
    each submission-dump shard as soon as it is written: filtering does not wait for the whole
    (possibly many-GB) dump to be cut. Returns the splits and the filter futures by shard path."""
    streamed = {stems[p]: 0 for p in inputs if not is_comment_input(p)}  # comment shards wait for all NSFW ids
    filtering: dict[str, Any] = {}

    def submit_ready() -> None:
        for stem, count in streamed.items():
            for entry in shards.split_so_far(shards_dir, stem, count):
                filtering[entry["path"]] = filter_task.submit(entry, recipe_path)
                streamed[stem] += 1

    # on threads of this process, not on the workers: a worker busy splitting could not filter
    # (with one worker, filtering waited for the whole split); the split is zstd and hashing in C
    with ThreadPoolTaskRunner(max_workers=min(SPLIT_THREADS, len(inputs)) or 1) as splitter:
        splits = [splitter.submit(split_task, {"path": p, "shards_dir": shards_dir, "stem": stems[p],
                                               "shard_lines": shard_lines, "sha256": hashes.get(p)})
                  for p in inputs]
        while wait(splits, timeout=0.25).not_done:
            submit_ready()
        done = [f.result() for f in splits]
    submit_ready()
    for sp in done:  # what was submitted early is the start of what the finished split lists
        early = streamed.get(sp.stem, 0)
        if early > len(sp.shards) or [e for e in sp.shards if e["path"] in filtering] != sp.shards[:early]:
            raise RuntimeError(f"{sp.input}: the shards written while splitting differ from the split's list")
    return done, filtering


def _filter_and_join(new_shards: list[dict[str, Any]], prior_shards: list[dict[str, Any]],
                     recipe_path: str, filtering: dict[str, Any], started: float | None = None) -> None:
    """Filter submission-dump shards in parallel (`filtering`: those already submitted while
    splitting), then the shards the comment join sends back with more NSFW ids."""
    posts_first = [s for s in new_shards if not is_comment_input(s["source_file"])]
    firsts = _run_parallel("filter", [filtering.get(s["path"]) or filter_task.submit(s, recipe_path)
                                      for s in posts_first], started)
    second = filter_shards.rejoin_plan(new_shards, prior_shards, firsts)
    if second:
        _run_parallel("filter comments", [filter_task.submit(s, recipe_path, ids) for s, ids in second])


@functools.cache  # once per process: later calls return the same thread
def warm_gate_imports() -> threading.Thread:
    """Import Great Expectations (~3-7 s of CPU) and the gate with its PII detectors in a background
    thread, once per process, so publishing does not wait for them; a failed import resurfaces in
    the gate. `express build` starts it while it waits for its temporary Prefect API (this process
    idles then); otherwise the build starts it while the workers dedupe."""
    def load() -> None:
        try:
            from warehouse.gx_adapter import import_gx

            import_gx()
            import warehouse.gate  # noqa: F401
        except Exception:  # noqa: BLE001 - the gate imports it again and reports the error
            pass

    thread = threading.Thread(target=load, name="warm-gx-import", daemon=True)
    thread.start()
    return thread


@flow(name="express-shard-work")
def shard_work_flow(run_dir: str, recipe_path: str, inputs: list[str], shard_lines: int,
                    prior_shards: list[dict[str, Any]], prior_inputs: list[dict[str, Any]],
                    hashes: dict[str, str], quarantine_dir: str, warm_gate: bool = True) -> dict[str, Any]:
    """The per-shard work of a run on the task runner it is given: split, filter, dedupe, extract;
    returns the finished shards and the manifest's input entries. A flow of its own so that its
    workers (each with a spaCy model) are shut down before the run is assembled and the quality
    gate runs here: the workers and those steps never hold memory at the same time."""
    inputs = order_inputs(list(inputs))  # submissions before comments, as a reader in order sees them
    shards_dir = str(Path(run_dir) / "shards")
    stems = shards.input_stems(inputs)
    filter_started = time.perf_counter()  # the first filters run while the split still does
    splits, filtering = _split_and_filter(inputs, shards_dir, stems, shard_lines, recipe_path, hashes)
    new_shards = [s for sp in splits for s in sp.shards]
    all_shards = prior_shards + new_shards
    print(f"[split] {len(inputs)} new input(s) -> {len(new_shards)} shards of <= {shard_lines:,} lines"
          f"{f'; {len(prior_shards)} shards from the parent run' if prior_shards else ''}", flush=True)
    _filter_and_join(new_shards, prior_shards, recipe_path, filtering, filter_started)
    dedupe = dedupe_task.submit(all_shards, recipe_path)  # on a worker: its DuckDB memory is not ours
    # queued behind the dedupe on the cluster, so they start the moment it ends, without this process
    extracts = [extract_task.submit(s, recipe_path, wait_for=[dedupe]) for s in all_shards]
    if warm_gate:  # while a worker dedupes and the other idles: publishing then starts at once
        warm_gate_imports()
    deduped = dedupe.result()
    print(f"[dedupe] {sum(d.funnel.read for d in deduped):,} posts through the duplicate filters "
          f"({sum(d.skipped for d in deduped)} shards done before)", flush=True)
    # on this process while the workers extract: the ingest quarantine (complete once dedupe is),
    # and the gate's PII scan of each extracted shard
    with ThreadPoolTaskRunner(max_workers=1) as scanner:
        joined = scanner.submit(quarantine_task, {"shard_list": all_shards, "run_dir": run_dir,
                                                  "quarantine_dir": quarantine_dir})
        shard_of = {id(f): s for f, s in zip(extracts, all_shards)}
        scans = []
        _run_parallel("extract", extracts, then=lambda fut: scans.append(
            scanner.submit(prescan_task, {"shard": shard_of[id(fut)], "recipe_path": recipe_path, "run_dir": run_dir})))
        wait([joined, *scans])
        for f in [joined, *scans]:
            f.result()
    return {"shards": all_shards, "inputs": prior_inputs + [input_record(sp.input, sp.sha256) for sp in splits]}


def build_run(wh: Warehouse, run_id: str, run_dir: Path, recipe_path: str, inputs: list[str], shard_lines: int,
              prior_shards: list[dict[str, Any]] | None = None, prior_inputs: list[dict[str, Any]] | None = None,
              extra_manifest: dict[str, Any] | None = None, publish: bool = True, workers: int = 0,
              dask_address: str | None = None, hashes: dict[str, str] | None = None) -> dict[str, Any]:
    """Wire one run (inside a flow): the shard work on its task runner, then assembling and
    publishing here once those workers are gone. Prior shards (a rebuild's parent) are already
    filtered: they are replayed through dedupe and, when their `work` folder is new, re-labelled."""
    with run_lock(run_dir, run_id):
        gate = publish and load_saved_recipe(recipe_path).gate.enabled
        done = shard_work_flow.with_options(task_runner=task_runner(workers, dask_address))(
            str(run_dir), recipe_path, list(inputs), shard_lines, prior_shards or [], prior_inputs or [],
            hashes or {}, str(wh.quarantine_dir(run_id)), gate)
        assembled: AssembleResult = assemble_task(done["shards"], done["inputs"], str(run_dir),
                                                  str(wh.quarantine_dir(run_id)))
        print(f"[ingest]  {assembled.ingest.to_dict()}", flush=True)
        print(f"[extract] {assembled.extract.to_dict()}", flush=True)
        if extra_manifest:  # kept for publish_flow, when this run is published later
            (run_dir / "manifest-extra.json").write_text(json.dumps(extra_manifest, indent=2) + "\n")
        release = None
        if publish:
            release = publish_task(str(wh.root), run_id, str(run_dir), recipe_path, assembled, extra_manifest)
            print(f"[publish] {release.release_id} -> {release.path}", flush=True)
        quarantine = wh.quarantine_dir(run_id)
        return {"run_id": run_id, "release": release.to_dict() if release else None,
                "ingest": {"funnel": assembled.ingest.to_dict(), "quarantine": str(quarantine / "ingest.parquet"),
                           "raw_posts": [str(Path(s["path"]) / "posts.parquet") for s in assembled.shard_list]},
                "extract": {"funnel": assembled.extract.to_dict(), "examples": assembled.examples,
                            "unmapped": assembled.unmapped, "unmapped_report": str(run_dir / "unmapped.json"),
                            "disclosures": assembled.disclosures, "quarantine": str(quarantine / "extract.parquet")},
                "shards": assembled.shards, "flow_run_id": str(prefect_run.id)}


@flow(name="express-build")
def build_flow(inputs: list[str], warehouse: str, config: str | None = None, shard_lines: int | None = None,
               run_id: str | None = None, publish: bool = True, workers: int | None = None,
               dask_address: str | None = None, praw_terms: list[str] | None = None) -> dict[str, Any]:
    """Build (and by default publish) a release from dumps and/or a praw pull, in resumable shards;
    the same call after a kill resumes the same run. `workers`: None picks in-process (0) for small
    inputs, else the recipe's; `dask_address` uses an existing cluster. publish=False leaves
    publishing to `publish_flow`."""
    wh = Warehouse.at(warehouse)
    recipe = load_any_recipe(config)
    if praw_terms:
        recipe = override(recipe, "sources", kind="praw", listing="search", terms=tuple(praw_terms))
    inputs = list(inputs)
    if recipe.sources.kind == "praw":
        pulled = pull_task(recipe, str(wh.root / "inputs" / "praw"))
        print(f"[scrape]  {pulled.new_items:,} new items; the build reads all {len(pulled.files)} pull file(s)",
              flush=True)
        inputs += [str(f) for f in pulled.files]
    check_inputs(inputs)
    inputs = expand_inputs(inputs)
    if not inputs:
        raise ValueError("no inputs: give --input files (or folders of dumps) or a recipe with [sources] kind = \"praw\"")
    shard_lines = shard_lines or recipe.orchestrate.shard_lines
    review = review_state(wh, recipe.dataset.name)
    run_id = run_id or build_run_id(inputs, recipe, shard_lines, review)
    run_dir, recipe_path = open_run(wh, run_id, recipe, inputs, shard_lines)
    save_review_state(run_dir, review)
    workers = default_workers(inputs, recipe) if workers is None and not dask_address else (workers or 0)
    return build_run(wh, run_id, run_dir, recipe_path, inputs, shard_lines, publish=publish, workers=workers,
                     dask_address=dask_address)


@flow(name="express-publish")
def publish_flow(warehouse: str, run_id: str) -> dict[str, Any]:
    """Publish a finished (assembled) run by id; a run that already has a release is not published twice."""
    wh = Warehouse.at(warehouse)
    run_dir = wh.run_dir(run_id)
    marker = shards.read_marker(run_dir, "assemble")
    if marker is None:
        raise FileNotFoundError(f"{run_dir}: run not assembled yet; finish it with express build --resume {run_id}")
    extra_file = run_dir / "manifest-extra.json"
    extra = json.loads(extra_file.read_text()) if extra_file.exists() else None
    with run_lock(run_dir, run_id):
        return publish_task(str(wh.root), run_id, str(run_dir), str(run_dir / "recipe.json"),
                            AssembleResult.from_marker(marker), extra).to_dict()
