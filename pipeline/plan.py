"""Planning a build before anything runs: what it reads, with which recipe, where it runs (the
BuildPlan the CLI checks once), and then the run it opens (a Run: its id, folder and the shards
it reuses). A full build and an incremental rebuild (pipeline/rebuild.py) end in the same Run,
which the build flow executes."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.errors import InputError
from pipeline.results import Published
from pipeline.run import build_run_id, check_inputs, expand_inputs, input_record, load_any_recipe, open_run, run_facts
from pipeline.shards import Shard
from review.build import review_state, save_review_state
from schemas.config import Recipe, check_number, override
from sources.dumps import count_lines
from sources.join import order_inputs
from warehouse.layout import RunPaths, Warehouse, quarantine_file
from warehouse.ledgers.takedowns import save_takedown_state, takedown_state

NO_INPUTS = ("no input dump{where}: give --input FILE (or a folder of dumps), --praw-query TERM, or a recipe "
             "with [sources] kind = \"praw\"")


def no_inputs(given: list[str] | tuple[str, ...] = ()) -> InputError:
    """The one error for a build with nothing to read (`given`: the folders that held no dump)."""
    return InputError(NO_INPUTS.format(where=f" in {', '.join(given)}" if given else ""))


def default_workers(inputs: list[str] | tuple[str, ...], recipe: Recipe) -> int:
    """In this process (0) for inputs under [orchestrate] in_process_below_mb, else the recipe's
    workers: a local cluster costs seconds to start and a model load per worker."""
    size = sum(Path(p).stat().st_size for p in inputs if Path(p).is_file())
    return 0 if size < recipe.orchestrate.in_process_below_mb * 2**20 else recipe.orchestrate.workers


def one_shard(inputs: list[str] | tuple[str, ...], shard_lines: int) -> bool:
    """Do the inputs hold no more lines than one shard? Counted only that far: a build of one
    shard's work gains nothing from a cluster, which would only add its start and a model load."""
    total = 0
    for path in inputs:
        total += count_lines(path, shard_lines + 1 - total)
        if total > shard_lines:
            return False
    return True


@dataclass(frozen=True)
class BuildPlan:
    """A build checked before any flow starts: its recipe, the files it reads, whether it first
    pulls live results with praw, and where its shard work runs."""

    warehouse: Path
    recipe: Recipe
    config: str | None  # the recipe's file: a TOML, or the recipe.json of a resumed run
    inputs: tuple[str, ...]  # files, folders expanded, each once
    shard_lines: int
    workers: int  # local Dask worker processes; 0 runs the shard work in this process
    dask_address: str | None = None  # an existing Dask scheduler instead of local workers
    run_id: str | None = None  # None: derived from what the run reads, once that is known
    pull: bool = False  # pull live results with praw first ([sources] kind = "praw", or --scrape)
    publish: bool = True

    @property
    def wh(self) -> Warehouse:
        return Warehouse(self.warehouse)

    @property
    def in_process(self) -> bool:
        """Does the shard work run in this process (no Dask cluster)?"""
        return not (self.workers or self.dask_address)


@dataclass(frozen=True)
class BuildRequest:
    """What a build is asked for (the command line's flags, a schedule's folders), before
    `plan_build` checks it. `resume` takes a run's recorded inputs, shard size and saved recipe;
    `praw_terms` makes it a praw search for those terms; `workers` None picks in-process for small
    inputs; `watch`: the inputs are folders a schedule watches, which may hold no dump yet."""

    warehouse: str | Path | None = None
    inputs: list[str] | tuple[str, ...] = ()
    config: str | None = None
    shard_lines: int | None = None
    run_id: str | None = None
    resume: str | None = None
    workers: int | None = None
    dask_address: str | None = None
    praw_terms: list[str] | tuple[str, ...] = ()
    scrape: bool = False
    publish: bool = True
    watch: bool = False


def plan_build(request: BuildRequest) -> BuildPlan:
    """Check a build request: the recipe loads, every input exists, there is something to read."""
    r, wh = request, Warehouse.at(request.warehouse)
    inputs, config, run_id, shard_lines, workers = r.inputs, r.config, r.run_id, r.shard_lines, r.workers
    if r.resume:
        facts = run_facts(wh, r.resume)
        inputs, config, run_id = facts["inputs"], str(wh.run(r.resume).recipe), r.resume
        shard_lines = facts["shard_lines"] if shard_lines is None else shard_lines
    recipe = load_any_recipe(config)
    if r.praw_terms:
        recipe = override(recipe, "sources", kind="praw", listing="search", terms=tuple(r.praw_terms))
    given = [str(Path(p)) for p in inputs]
    check_inputs(given)
    files = expand_inputs(given)
    pull = r.scrape or recipe.sources.kind == "praw"
    if not files and not pull and not (r.watch and given):
        raise no_inputs(given)
    shard_lines = recipe.orchestrate.shard_lines if shard_lines is None else shard_lines
    check_number("orchestrate", "shard_lines", shard_lines, "shard_lines")
    if workers is not None:
        check_number("orchestrate", "workers", workers, "workers")
    if r.dask_address:
        workers = 0
    elif workers is None:
        workers = default_workers(files, recipe)
    if workers and one_shard(files, shard_lines):
        workers = 0
    return BuildPlan(wh.root, recipe, config, tuple(files), shard_lines, workers, r.dask_address, run_id, pull,
                     r.publish)


@dataclass(frozen=True)
class Run:
    """An opened run: its id and folder, the saved recipe every step reads, the new inputs it
    splits, and (for a rebuild) the parent's shards it reuses."""

    warehouse: Path
    run_id: str
    paths: RunPaths
    quarantine: Path
    inputs: tuple[str, ...]  # new inputs, submission dumps before comment dumps
    shard_lines: int
    workers: int
    dask_address: str | None = None
    publish: bool = True
    prior_shards: tuple[Shard, ...] = ()  # already filtered; replayed through dedupe
    prior_inputs: tuple[dict[str, Any], ...] = ()  # their manifest entries
    hashes: dict[str, str] = field(default_factory=dict)  # input sha256s known already
    extra_manifest: dict[str, Any] | None = None  # e.g. the parent of an incremental rebuild

    @property
    def in_process(self) -> bool:
        """Does the shard work run in this process (no Dask cluster)?"""
        return not (self.workers or self.dask_address)

    @property
    def recipe_path(self) -> str:
        return str(self.paths.recipe)

    @property
    def shards_dir(self) -> Path:
        return self.paths.shards


def open_build(plan: BuildPlan, pulled: list[str] | tuple[str, ...] = ()) -> Run:
    """Open (or reopen) the run of a full build over the plan's inputs and the `pulled` praw files;
    the run id is derived from them unless the plan names one."""
    files = list(dict.fromkeys([*plan.inputs, *map(str, pulled)]))
    if not files:
        raise no_inputs()
    review = review_state(plan.wh, plan.recipe.dataset.name)
    takedowns = takedown_state(plan.wh)
    run_id = plan.run_id or build_run_id(files, plan.recipe, plan.shard_lines, review, takedowns)
    return _open(plan, run_id, files, review, takedowns)


def _open(plan: BuildPlan, run_id: str, files: list[str], review: dict[str, Any] | None,
          takedowns: dict[str, Any] | None, **reuse: Any) -> Run:
    paths = open_run(plan.wh, run_id, plan.recipe, files, plan.shard_lines)
    save_review_state(paths, review)
    save_takedown_state(paths.takedowns, takedowns)
    return Run(plan.warehouse, run_id, paths, plan.wh.quarantine_dir(run_id), tuple(order_inputs(files)), plan.shard_lines,
               plan.workers, plan.dask_address, plan.publish, **reuse)


def open_rebuild(plan: BuildPlan, rebuild: Any) -> Run:
    """Open the run an incremental rebuild planned (pipeline/rebuild.py: RebuildPlan)."""
    return _open(plan, rebuild.run_id, rebuild.new_inputs, rebuild.review, rebuild.takedowns,
                 prior_shards=tuple(rebuild.prior_shards), prior_inputs=tuple(rebuild.prior_inputs),
                 hashes=dict(rebuild.hashes), extra_manifest=rebuild.extra_manifest)


@dataclass
class BuildResult:
    """What a build or rebuild did: its run, funnels and tables, and the release it published.
    A rebuild with nothing new has no run and says why in `message`."""

    run_id: str | None
    release: Published | None = None
    assembled: Any = None  # AssembleResult
    quarantine: Path | None = None
    run: RunPaths | None = None
    message: str = ""
    parent: str | None = None  # the release an incremental rebuild extends
    scrape: dict[str, Any] | None = None  # what the praw pull brought
    flow_run_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (what a flow run reports)."""
        out: dict[str, Any] = {"run_id": self.run_id, "release": self.release.to_dict() if self.release else None,
                               "message": self.message, "parent": self.parent, "scrape": self.scrape,
                               "flow_run_id": self.flow_run_id}
        a = self.assembled
        if a is not None:
            q = self.quarantine
            out.update(
                shards=a.shards,
                ingest={"funnel": a.ingest.to_dict(), "quarantine": str(quarantine_file(q, "ingest")),
                        "raw_posts": [str(s.posts) for s in a.shard_list]},
                extract={"funnel": a.extract.to_dict(), "examples": a.examples, "unmapped": a.unmapped,
                         "unmapped_report": str(self.run.unmapped), "disclosures": a.disclosures,
                         "quarantine": str(quarantine_file(q, "extract"))})
        return out


def saved_extra(run: RunPaths) -> dict[str, Any] | None:
    """Manifest fields a run kept for a later publish (`manifest-extra.json`)."""
    return json.loads(run.manifest_extra.read_text()) if run.manifest_extra.exists() else None


def input_records(run: Run, splits: list[Any]) -> list[dict[str, Any]]:
    """The manifest's input entries: the parent's, then each input this run split."""
    return [*run.prior_inputs, *(input_record(sp.input, sp.sha256) for sp in splits)]
