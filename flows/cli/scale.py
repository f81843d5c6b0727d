"""Commands for builds over time: incremental rebuilds, the schedule, and `build-sharded`, the
deprecated name of `express build`."""
from __future__ import annotations

import argparse
import sys

from flows.cli import prefect_env
from flows.cli.core import build_arguments, cmd_build, warehouse_arg


def cmd_build_sharded(args: argparse.Namespace) -> int:
    print("express build-sharded is deprecated and will be removed after this release: use express build "
          "(same options)", file=sys.stderr)
    return cmd_build(args)


def _check_rebuild_inputs(args: argparse.Namespace) -> None:
    """A rebuild needs something to read (inputs or a live pull), and its inputs must exist."""
    from pipeline.run import check_inputs, load_any_recipe

    recipe = load_any_recipe(args.config)
    if not (args.input or args.scrape or recipe.sources.kind == "praw"):
        raise ValueError("give --input PATH, --scrape, or a recipe with [sources] kind = \"praw\"")
    check_inputs(args.input or [])


def cmd_rebuild(args: argparse.Namespace) -> int:
    _check_rebuild_inputs(args)
    prefect_env.configure(temporary_api=not args.dask_address)
    from flows.rebuild import rebuild_flow
    from warehouse.layout import Warehouse

    out = rebuild_flow(args.input or [], str(Warehouse.at(args.warehouse).root), args.config, args.shard_lines,
                       args.scrape, args.workers, args.dask_address)
    print(out["release"]["manifest"] if out.get("release") else out["message"])
    return 0


def cmd_schedule(args: argparse.Namespace) -> int:
    _check_rebuild_inputs(args)
    prefect_env.configure()
    from flows.deployments import rebuild_deployment

    dep = rebuild_deployment(args.input or [], args.warehouse, args.config, scrape=args.scrape)
    print(f"deployment {dep.name}: cron {dep.schedules[0].schedule.cron} "
          f"({dep.schedules[0].schedule.timezone}); serving (Ctrl-C stops)", flush=True)
    from prefect import serve

    serve(dep)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("build-sharded", help="deprecated: the same as `express build`")
    build_arguments(p)
    p.set_defaults(func=cmd_build_sharded)

    p = sub.add_parser("rebuild", help="incremental rebuild: new dumps only, re-label the rest if rules changed")
    p.add_argument("--input", action="append",
                   help="dump file or folder of dumps; files already in the latest release are not re-read")
    p.add_argument("--config", help="recipe TOML (default: built-in defaults)")
    p.add_argument("--scrape", action="store_true",
                   help="also pull live results newer than the stored checkpoint with praw, as [sources] asks "
                        "(always on when [sources] kind = \"praw\")")
    p.add_argument("--workers", type=int, default=None,
                   help="local Dask worker processes (default: [orchestrate] workers; 0 = in this process)")
    p.add_argument("--dask-address", help="use an existing Dask scheduler, e.g. tcp://10.0.0.5:8786")
    p.add_argument("--shard-lines", type=int, default=None,
                   help="raw lines per shard (default: [orchestrate] shard_lines); memory is bounded by it")
    warehouse_arg(p)
    p.set_defaults(func=cmd_rebuild)

    p = sub.add_parser("schedule", help="serve the weekly rebuild deployment (needs a Prefect server)")
    p.add_argument("--input", action="append", help="dump file or folder watched by the rebuild")
    p.add_argument("--config", help="recipe TOML; its [orchestrate] cron sets the schedule")
    p.add_argument("--scrape", action="store_true",
                   help="each run also pulls new praw results (always on when [sources] kind = \"praw\")")
    warehouse_arg(p)
    p.set_defaults(func=cmd_schedule)
