"""The incremental (scheduled) rebuild flow: pull new praw results (for a praw recipe or
scrape=True), plan what is new since the latest release (pipeline/rebuild.py), then run the same
build on it; the new version's manifest names its parent."""
from __future__ import annotations

from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows.build import build_run
from pipeline.rebuild import plan_rebuild
from pipeline.review import save_review_state
from pipeline.run import check_inputs, expand_inputs, load_any_recipe, open_run, praw_inputs
from schemas.config import Recipe
from warehouse.layout import Warehouse
from warehouse.locking import file_lock


def _retry_unless_no_credentials(task: Any, task_run: Any, state: Any) -> bool:
    """Retrying cannot bring missing credentials; a rate limit or server error may clear."""
    from sources.praw_source import MissingCredentials

    return not isinstance(state.result(raise_on_failure=False), MissingCredentials)


pull_task = task(praw_inputs, name="pull-praw-new", retries=2, retry_delay_seconds=10, cache_policy=NO_CACHE,
                 retry_condition_fn=_retry_unless_no_credentials)
plan_task = task(plan_rebuild, name="plan-rebuild", cache_policy=NO_CACHE)


@flow(name="express-rebuild")
def rebuild_flow(inputs: list[str], warehouse: str, config: str | None = None, shard_lines: int | None = None,
                 scrape: bool = False, workers: int | None = None, dask_address: str | None = None) -> dict[str, Any]:
    """Publish a new version from what is new since the latest release (or a first full build).
    A second rebuild of the same dataset while one runs stops at once (it would read the same parent)."""
    wh = Warehouse.at(warehouse)
    recipe = load_any_recipe(config)
    name = recipe.dataset.name
    with file_lock(wh.dataset_dir(name) / ".rebuild.lock", timeout=0, holder=f"another rebuild of {name}"):
        return _rebuild(wh, recipe, inputs, shard_lines or recipe.orchestrate.shard_lines, scrape, workers,
                        dask_address)


def _rebuild(wh: Warehouse, recipe: Recipe, inputs: list[str], shard_lines: int, scrape: bool,
             workers: int | None, dask_address: str | None) -> dict[str, Any]:
    pulled = None
    if scrape or recipe.sources.kind == "praw":
        delay = min(60.0, recipe.sources.max_backoff_seconds)
        pulled = pull_task.with_options(retry_delay_seconds=delay)(recipe, str(wh.root / "inputs" / "praw"))
        inputs = list(inputs) + [str(f) for f in pulled.files]
    files = expand_inputs(inputs)
    if not files:
        raise ValueError("no inputs: give dump files or folders, or scrape (a praw recipe or --scrape) "
                         "something first")
    check_inputs(files)
    plan = plan_task(wh, recipe, files, shard_lines)
    scrape_facts = pulled.to_dict() if pulled else None
    if plan.run_id is None:
        msg = plan.message
        if pulled:
            msg += f" (praw: {pulled.new_items} new, {pulled.skipped_seen} skipped as already seen)"
        print(f"[rebuild] {msg}", flush=True)
        return {"message": msg, "release": None, "parent": plan.parent, "scrape": scrape_facts}
    if plan.relabel:
        print(f"[rebuild] re-deriving labels of {len(plan.prior_shards)} stored shards "
              f"({', '.join(plan.relabel)} changed)", flush=True)
    extra = plan.extra_manifest
    if extra and pulled:
        extra["incremental"]["scrape"] = {k: scrape_facts[k] for k in ("path", "new_items", "rows", "skipped_seen")}
    print(f"[rebuild] {len(plan.new_inputs)} new input(s) of {len(files)}; parent {plan.parent or 'none'}", flush=True)
    run_dir, recipe_path = open_run(wh, plan.run_id, recipe, plan.new_inputs, shard_lines)
    save_review_state(run_dir, plan.review)
    workers = recipe.orchestrate.workers if workers is None and not dask_address else (workers or 0)
    built = build_run(wh, plan.run_id, run_dir, recipe_path, plan.new_inputs, shard_lines,
                      prior_shards=plan.prior_shards, prior_inputs=plan.prior_inputs, extra_manifest=extra,
                      workers=workers, dask_address=dask_address, hashes=plan.hashes)
    return {**built, "scrape": scrape_facts}
