"""The incremental (scheduled) rebuild flow: pull new praw results (for a praw recipe or
--scrape), plan what is new since the latest release (pipeline/rebuild.py), then run the same
build on it; the new version's manifest names its parent."""
from __future__ import annotations

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from common.locking import file_lock
from flows.build import build_run, pull_inputs
from pipeline.plan import BuildPlan, BuildResult, no_inputs, open_rebuild
from pipeline.rebuild import plan_rebuild
from takedowns.shards import honour_in_shards

plan_task = task(plan_rebuild, name="plan-rebuild", cache_policy=NO_CACHE)
honour_task = task(honour_in_shards, name="honour-takedowns", cache_policy=NO_CACHE)


@flow(name="express-rebuild", validate_parameters=False)
def rebuild_flow(plan: BuildPlan) -> BuildResult:
    """Publish a new version from what is new since the latest release (or a first full build).
    A second rebuild of the same dataset while one runs stops at once (it would read the same parent)."""
    name = plan.recipe.dataset.name
    with file_lock(plan.wh.rebuild_lock(name), timeout=0, holder=f"another rebuild of {name}"):
        pulled_files, pulled = pull_inputs(plan)
        files = list(dict.fromkeys([*plan.inputs, *pulled_files]))
        if not files:
            raise no_inputs()
        rebuild = plan_task(plan.wh, plan.recipe, files, plan.shard_lines)
        scrape = pulled.to_dict() if pulled else None
        if rebuild.run_id is None:
            msg = rebuild.message
            if pulled:
                msg += f" (praw: {pulled.new_items} new, {pulled.skipped_seen} skipped as already seen)"
            print(f"[rebuild] {msg}", flush=True)
            return BuildResult(None, message=msg, parent=rebuild.parent, scrape=scrape)
        if rebuild.relabel:
            print(f"[rebuild] re-deriving labels of {len(rebuild.prior_shards)} stored shards "
                  f"({', '.join(rebuild.relabel)} changed)", flush=True)
        if rebuild.extra_manifest and pulled:
            rebuild.extra_manifest["incremental"]["scrape"] = {k: scrape[k] for k in ("path", "new_items", "rows",
                                                                                      "skipped_seen")}
        if rebuild.takedowns and rebuild.prior_shards:  # the stored posts, as if read now
            changed = honour_task(plan.wh.root, rebuild.prior_shards)
            print(f"[rebuild] takedowns honoured in the stored shards ({changed} folders rewritten)", flush=True)
        print(f"[rebuild] {len(rebuild.new_inputs)} new input(s) of {len(files)}; parent {rebuild.parent or 'none'}",
              flush=True)
        result = build_run(open_rebuild(plan, rebuild))
        result.parent, result.scrape = rebuild.parent, scrape
        return result
