"""The build flow: split -> filter (parallel) -> dedupe (in order) -> extract (parallel) ->
assemble -> publish. It wires the steps of pipeline/ as Prefect tasks (retries, what runs where
and when) around the one step runner, and passes shards, paths and typed results, never data.

A small input is one shard run in this process; larger ones run on local Dask workers or an
existing cluster. Every step writes a completion marker, so the same command after a kill resumes.
A build is one flow run: its shard work runs on a task runner entered around that work only.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed, wait
from prefect.runtime import flow_run as prefect_run
from prefect.task_runners import ThreadPoolTaskRunner, TaskRunner
from prefect.utilities.callables import get_call_parameters

from common import stopping
from flows.dask_runner import task_runner
from flows import runtime
from pipeline import steps
from pipeline.assemble import AssembleStep, JoinIngestQuarantine, RunTables
from pipeline.dedupe_shards import DedupeStep
from pipeline.extract_shards import ExtractStep
from pipeline.filter_shards import FilterStep, rejoin_plan
from pipeline.pii_prescan import PrescanStep
from pipeline.plan import BuildPlan, BuildResult, Run, input_records, open_build, saved_extra
from common.progress import Progress
from pipeline.publish import publish_run
from pipeline.results import AssembleResult, Published, ShardResult, SplitResult
from pipeline.run import praw_inputs, run_lock
from pipeline.shards import Shard, input_stems
from pipeline.split import InputFile, SplitStep, split_so_far
from sources.dumps import DumpError
from sources.join import is_comment_input
from sources.praw_source import Refused
from warehouse.layout import RunPaths, Warehouse
from warehouse.releases.publish import PublishError


def _retry_unless_it_cannot_heal(task: Any, task_run: Any, state: Any) -> bool:
    """A damaged dump stays damaged and a refused release (failed gate, no examples, version taken)
    or scrape (credentials missing or rejected, a listing forbidden) is refused again: retrying
    those only repeats the work (a failed gate wrote one rejected folder per attempt); an I/O error,
    a rate limit or a lost worker may clear."""
    return not isinstance(state.result(raise_on_failure=False), (DumpError, PublishError, Refused))


@dataclass(frozen=True)
class StepOptions:
    retries: int = 0
    retry_delay_seconds: float = 0


# How Prefect runs each step: the one place retries are set.
STEP_OPTIONS = {SplitStep: StepOptions(2, 5), FilterStep: StepOptions(1), DedupeStep: StepOptions(),
                ExtractStep: StepOptions(1), PrescanStep: StepOptions(1), JoinIngestQuarantine: StepOptions(1),
                AssembleStep: StepOptions()}


def _run_step(step: type[steps.Step[Any, Any]], unit: Any, recipe_path: str, **params: Any) -> Any:
    return steps.run_step(step, unit, recipe_path, runtime.around_setup, **params)


def _run_in_order(step: type[steps.OrderedStep[Any, Any]], units: list[Any], recipe_path: str) -> list[Any]:
    return steps.run_in_order(step, units, recipe_path, runtime.around_setup)


def _publish(wh: Warehouse, run: RunPaths, assembled: AssembleResult, extra: dict[str, Any] | None) -> Published:
    return publish_run(wh, run, assembled, extra, gate=runtime.gate_runner())


_step_task = task(_run_step, cache_policy=NO_CACHE, retry_condition_fn=_retry_unless_it_cannot_heal,
                  task_run_name="{step.name}-{unit.name}")
_ordered_task = task(_run_in_order, cache_policy=NO_CACHE, task_run_name="{step.name}-shards")
SPLIT_THREADS = 2  # inputs split at once, beside the workers


def step_task(step: type[steps.Step[Any, Any]]) -> Any:
    """The Prefect task that runs `step` through the step runner, with the step's options."""
    opts = STEP_OPTIONS[step]
    base = _ordered_task if issubclass(step, steps.OrderedStep) else _step_task
    return base.with_options(name=f"{step.name}-step", retries=opts.retries,
                             retry_delay_seconds=opts.retry_delay_seconds)


pull_task = task(praw_inputs, name="pull-praw", retries=2, retry_delay_seconds=10, cache_policy=NO_CACHE,
                 retry_condition_fn=_retry_unless_it_cannot_heal)
publish_task = task(_publish, name="publish-run", retries=2, retry_delay_seconds=2, cache_policy=NO_CACHE,
                    retry_condition_fn=_retry_unless_it_cannot_heal)


@dataclass(frozen=True)
class StepRunner:
    """A task runner the build entered itself, with the steps' tasks submitted to it: the shard
    work's (this process, local Dask workers or a cluster), entered around that work only so that
    its workers, each with a spaCy model, are gone before the run is assembled and the gate runs;
    or threads of this process beside it (the split, the ingest quarantine)."""
    runner: TaskRunner[Any]

    def submit(self, step: type[steps.Step[Any, Any]], unit: Any, recipe_path: str,
               wait_for: list[Any] | None = None, **params: Any) -> Any:
        """The step's task on `unit`, as `task.submit` would send it to a flow's own task runner."""
        step_run = step_task(step)
        return self.runner.submit(step_run, get_call_parameters(step_run.fn, (step, unit, recipe_path), params),
                                  wait_for=wait_for)


def _run_parallel(step: str, submitted: list[Any], started: float | None = None,
                  then: Callable[[Any], None] | None = None) -> list[ShardResult]:
    """Wait for shard tasks, printing progress as each finishes; results in submission order.
    `started`: when the tasks began (perf_counter), if before this call (filtering starts while
    the split runs), so the rate printed is records per second of the step. `then(future)` runs
    as each one finishes."""
    progress = Progress(step, len(submitted), unit="shards", every=0,
                        started=time.perf_counter() if started is None else started)
    for fut in as_completed(submitted):
        stopping.check()  # a Ctrl-C that something caught while this thread waited
        r = fut.result()
        progress.update(r.funnel.read, r.skipped, r.shard)
        if then is not None:
            then(fut)
    return [f.result() for f in submitted]


def _split_and_filter(run: Run, shards: StepRunner) -> tuple[list[SplitResult], dict[str, Any]]:
    """Split the inputs (one task each) and, while they are being split, submit the filter task of
    each submission-dump shard as soon as it is written: filtering does not wait for the whole
    (possibly many-GB) dump to be cut. Returns the splits and the filter futures by shard name."""
    stems = input_stems(list(run.inputs))
    streamed = {stems[p]: 0 for p in run.inputs if not is_comment_input(p)}  # comment shards wait for all NSFW ids
    filtering: dict[str, Any] = {}

    def submit_ready() -> None:
        for stem, count in streamed.items():
            for shard in split_so_far(run.shards_dir, stem, count):
                filtering[shard.name] = shards.submit(FilterStep, shard, run.recipe_path)
                streamed[stem] += 1

    # on threads of this process, not on the workers: a worker busy splitting could not filter
    # (with one worker, filtering waited for the whole split); the split is zstd and hashing in C
    with ThreadPoolTaskRunner(max_workers=min(SPLIT_THREADS, len(run.inputs)) or 1) as splitter:
        inputs = [InputFile(p, run.shards_dir, stems[p], run.shard_lines, run.hashes.get(p)) for p in run.inputs]
        splits = [StepRunner(splitter).submit(SplitStep, unit, run.recipe_path) for unit in inputs]
        while wait(splits, timeout=0.25).not_done:
            stopping.check()
            submit_ready()
        done = [f.result() for f in splits]
    submit_ready()
    for sp in done:  # what was submitted early is the start of what the finished split lists
        early = streamed.get(sp.stem, 0)
        if early > len(sp.shards) or [s for s in sp.shards if s.name in filtering] != sp.shards[:early]:
            raise RuntimeError(f"{sp.input}: the shards written while splitting differ from the split's list")
    return done, filtering


def _filter_and_join(run: Run, shards: StepRunner, new_shards: list[Shard], filtering: dict[str, Any],
                     started: float) -> None:
    """Filter submission-dump shards in parallel (`filtering`: those already submitted while
    splitting), then the shards the comment join sends back with more NSFW ids."""
    posts_first = [s for s in new_shards if not is_comment_input(s.source_file)]
    firsts = _run_parallel("filter", [filtering.get(s.name) or shards.submit(FilterStep, s, run.recipe_path)
                                      for s in posts_first], started)
    second = rejoin_plan(new_shards, list(run.prior_shards), firsts)
    if second:
        _run_parallel("filter comments", [shards.submit(FilterStep, s, run.recipe_path, nsfw_files=ids)
                                          for s, ids in second])


def shard_work(run: Run, shards: StepRunner) -> RunTables:
    """The per-shard work of a run: split, filter, dedupe, extract (and the gate's PII prescan of
    each extracted shard); returns the finished shards and the manifest's input entries."""
    filter_started = time.perf_counter()  # the first filters run while the split still does
    splits, filtering = _split_and_filter(run, shards)
    new_shards = [s for sp in splits for s in sp.shards]
    all_shards = [*run.prior_shards, *new_shards]
    print(f"[split] {len(run.inputs)} new input(s) -> {len(new_shards)} shards of <= {run.shard_lines:,} lines"
          f"{f'; {len(run.prior_shards)} shards from the parent run' if run.prior_shards else ''}", flush=True)
    _filter_and_join(run, shards, new_shards, filtering, filter_started)
    tables = RunTables(run.paths, run.quarantine, all_shards, input_records(run, splits))
    dedupe = shards.submit(DedupeStep, all_shards, run.recipe_path)  # on a worker: its DuckDB memory is not ours
    # queued behind the dedupe on the cluster, so they start the moment it ends, without this process
    extracts = [shards.submit(ExtractStep, s, run.recipe_path, wait_for=[dedupe]) for s in all_shards]
    deduped = dedupe.result()
    stopping.check()
    print(f"[dedupe] {sum(d.funnel.read for d in deduped):,} posts through the duplicate filters "
          f"({sum(d.skipped for d in deduped)} shards done before)", flush=True)
    # on this process while the workers extract: the ingest quarantine (complete once dedupe is);
    # the gate's PII scan of each extracted shard, on the task runner beside the extracts
    with ThreadPoolTaskRunner(max_workers=1) as scanner:
        joined = StepRunner(scanner).submit(JoinIngestQuarantine, tables, run.recipe_path)
        scans = [shards.submit(PrescanStep, s, run.recipe_path, wait_for=[f]) for f, s in zip(extracts, all_shards)]
        _run_parallel("extract", extracts)
        wait([joined, *scans])
        for f in [joined, *scans]:
            f.result()
    return tables


def build_run(run: Run) -> BuildResult:
    """Wire one opened run (inside a flow): the shard work on its task runner, then assembling and
    publishing here once those workers are gone. Prior shards (a rebuild's parent) are already
    filtered: they are replayed through dedupe and, when their `work` folder is new, re-labelled."""
    wh = Warehouse(run.warehouse)
    with run_lock(run.paths):
        with task_runner(run.workers, run.dask_address) as runner:
            tables = shard_work(run, StepRunner(runner))
        stopping.check()
        assembled: AssembleResult = step_task(AssembleStep)(AssembleStep, tables, run.recipe_path)
        stopping.check()
        print(f"[ingest]  {assembled.ingest.to_dict()}", flush=True)
        print(f"[extract] {assembled.extract.to_dict()}", flush=True)
        if run.extra_manifest:  # kept for publish_flow, when this run is published later
            run.paths.manifest_extra.write_text(json.dumps(run.extra_manifest, indent=2) + "\n")
        release = None
        if run.publish:
            release = publish_task(wh, run.paths, assembled, run.extra_manifest)
            print(f"[publish] {release.release_id} -> {release.path}", flush=True)
        return BuildResult(run.run_id, release, assembled, run.quarantine, run.paths, flow_run_id=str(prefect_run.id))


def pull_inputs(plan: BuildPlan) -> tuple[list[str], Any]:
    """The praw pull a plan asks for (its files, and what it brought), else nothing."""
    if not plan.pull:
        return [], None
    pulled = pull_task.with_options(retry_delay_seconds=min(60.0, plan.recipe.sources.max_backoff_seconds))(
        plan.recipe, str(plan.wh.inputs_dir("praw")))
    print(f"[scrape]  {pulled.new_items:,} new items; the build reads all {len(pulled.files)} pull file(s)", flush=True)
    return [str(f) for f in pulled.files], pulled


@flow(name="express-build", validate_parameters=False)
def build_flow(plan: BuildPlan) -> BuildResult:
    """Build (and unless the plan says not to, publish) a release from dumps and/or a praw pull, in
    resumable shards; the same plan after a kill resumes the same run."""
    files, pulled = pull_inputs(plan)
    result = build_run(open_build(plan, files))
    result.scrape = pulled.to_dict() if pulled else None
    return result


@flow(name="express-publish")
def publish_flow(warehouse: str, run_id: str) -> dict[str, Any]:
    """Publish a finished (assembled) run by id; a run that already has a release is not published twice."""
    wh = Warehouse.at(warehouse)
    run = wh.run(run_id)
    done = steps.read_marker(run.root, AssembleStep.name)
    if done is None:
        raise FileNotFoundError(f"{run.root}: run not assembled yet; finish it with express build --resume {run_id}")
    with run_lock(run):
        return publish_task(wh, run, AssembleResult.from_marker(done), saved_extra(run)).to_dict()
