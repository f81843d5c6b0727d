"""Commands for builds over time: incremental rebuilds and the weekly schedule."""
from __future__ import annotations

import argparse
from typing import Any

from flows import runtime
from flows.cli.core import build_arguments, build_plan, warehouse_arg


def cmd_rebuild(args: argparse.Namespace) -> int:
    plan = build_plan(args, scrape=args.scrape)
    with runtime.session(temporary_api=not plan.dask_address) as wait_for_api:
        from flows.rebuild import rebuild_flow

        wait_for_api()
        out = rebuild_flow(plan)
    if out.release:  # up to date: the flow said so, once
        print(out.release.manifest)
    return 0


def cmd_schedule(args: argparse.Namespace) -> int:
    plan = build_plan(args, scrape=args.scrape, watch=True)  # checked now; each weekly run plans anew
    from flows.deployments import rebuild_deployment

    dep = rebuild_deployment(args.input or [], str(plan.warehouse), args.config, scrape=args.scrape)
    print(f"deployment {dep.name}: cron {dep.schedules[0].schedule.cron} "
          f"({dep.schedules[0].schedule.timezone}); serving (Ctrl-C stops)", flush=True)
    from prefect import serve

    serve(dep)
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("rebuild", help="incremental rebuild: new dumps only, re-label the rest if rules changed")
    build_arguments(p, rebuild=True)
    p.set_defaults(func=cmd_rebuild)

    p = sub.add_parser("schedule", help="serve the weekly rebuild deployment (needs a Prefect server)")
    p.add_argument("--input", action="append", help="dump file or folder watched by the rebuild")
    p.add_argument("--config", help="recipe TOML; its [orchestrate] cron sets the schedule")
    p.add_argument("--scrape", action="store_true",
                   help="each run also pulls new praw results (always on when [sources] kind = \"praw\")")
    warehouse_arg(p)
    p.set_defaults(func=cmd_schedule, workers=None, dask_address=None, shard_lines=None)
