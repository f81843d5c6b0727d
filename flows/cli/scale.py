"""Commands for builds at scale: sharded/resumable builds on Dask, incremental rebuilds, the schedule."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from flows import prefect_env


def _runner_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workers", type=int, default=None,
                   help="local Dask worker processes (default: [orchestrate] workers; 0 = in this process)")
    p.add_argument("--dask-address", help="connect to an existing Dask scheduler, e.g. tcp://10.0.0.5:8786")
    p.add_argument("--shard-lines", type=int, default=None,
                   help="raw lines per shard (default: [orchestrate] shard_lines); memory is bounded by it")
    p.add_argument("--warehouse", help="warehouse folder (default: $EXPRESS_WAREHOUSE or ./data)")


def _defaults(args: argparse.Namespace, config: str | None) -> tuple[int, int]:
    from flows.sharded import load_any_recipe

    o = load_any_recipe(config).orchestrate
    return (args.workers if args.workers is not None else o.workers,
            args.shard_lines if args.shard_lines is not None else o.shard_lines)


def _share_api(workers: int, address: str | None) -> None:
    if workers > 0 and not address:
        from flows.api_server import share_temporary_api

        share_temporary_api()


def cmd_build_sharded(args: argparse.Namespace) -> int:
    prefect_env.configure()
    from flows.sharded import run_sharded_build
    from warehouse.layout import Warehouse

    wh = Warehouse.at(args.warehouse)
    inputs, config, run_id = args.input or [], args.config, args.run_id
    if args.resume:
        run_dir = wh.run_dir(args.resume)
        if not (run_dir / "run.json").exists():
            print(f"express build-sharded: no run '{args.resume}' in {wh.root / 'runs'}", file=sys.stderr)
            return 2
        facts = json.loads((run_dir / "run.json").read_text())
        inputs, config, run_id = facts["inputs"], str(run_dir / "recipe.json"), args.resume
        args.shard_lines = args.shard_lines or facts["shard_lines"]
    if not inputs:
        print("express build-sharded: give --input PATH (repeatable) or --resume RUN_ID", file=sys.stderr)
        return 2
    workers, shard_lines = _defaults(args, config)
    _share_api(workers, args.dask_address)
    try:
        built = run_sharded_build([str(Path(p)) for p in inputs], str(wh.root), config, shard_lines, run_id,
                                  workers, args.dask_address)
    except Exception as exc:  # one-line reason, non-zero exit: nothing was published
        print(f"express build-sharded: nothing published: {exc}", file=sys.stderr)
        return 1
    print(built["release"]["manifest"])
    return 0


def _no_inputs(args: argparse.Namespace, command: str) -> bool:
    """True (after saying so) when a rebuild would have nothing to read: no inputs, no live pull."""
    from flows.sharded import load_any_recipe

    if args.input or args.scrape or load_any_recipe(args.config).sources.kind == "praw":
        return False
    print(f"express {command}: give --input PATH, --scrape, or a recipe with [sources] kind = \"praw\"",
          file=sys.stderr)
    return True


def cmd_rebuild(args: argparse.Namespace) -> int:
    prefect_env.configure()
    from flows.rebuild import run_rebuild
    from warehouse.layout import Warehouse

    if _no_inputs(args, "rebuild"):
        return 2
    workers, shard_lines = _defaults(args, args.config)
    _share_api(workers, args.dask_address)
    try:
        out = run_rebuild(args.input or [], str(Warehouse.at(args.warehouse).root), args.config, shard_lines,
                          workers, args.dask_address, scrape=args.scrape)
    except Exception as exc:
        print(f"express rebuild: nothing published: {exc}", file=sys.stderr)
        return 1
    print(out["release"]["manifest"] if out.get("release") else out["message"])
    return 0


def cmd_schedule(args: argparse.Namespace) -> int:
    prefect_env.configure()
    from flows.deployments import rebuild_deployment
    if _no_inputs(args, "schedule"):
        return 2
    dep = rebuild_deployment(args.input or [], args.warehouse, args.config, scrape=args.scrape)
    print(f"deployment {dep.name}: cron {dep.schedules[0].schedule.cron} "
          f"({dep.schedules[0].schedule.timezone}); serving (Ctrl-C stops)", flush=True)
    from prefect import serve

    serve(dep)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("build-sharded", help="resumable build in shards on Dask (rerun or --resume after a kill)")
    p.add_argument("--input", action="append", help="dump file (.zst, .jsonl, .ndjson); repeatable")
    p.add_argument("--config", help="recipe TOML (default: built-in defaults)")
    p.add_argument("--run-id", help="run id (default: derived from inputs, recipe, shard size, code version)")
    p.add_argument("--resume", metavar="RUN_ID", help="resume a run by id with its recorded inputs and recipe")
    _runner_args(p)
    p.set_defaults(func=cmd_build_sharded)

    p = sub.add_parser("rebuild", help="incremental rebuild: new dumps only, re-label the rest if rules changed")
    p.add_argument("--input", action="append",
                   help="dump file or folder of dumps; files already in the latest release are not re-read")
    p.add_argument("--config", help="recipe TOML (default: built-in defaults)")
    p.add_argument("--scrape", action="store_true",
                   help="also pull live results newer than the stored checkpoint with praw, as [sources] asks "
                        "(always on when [sources] kind = \"praw\")")
    _runner_args(p)
    p.set_defaults(func=cmd_rebuild)

    p = sub.add_parser("schedule", help="serve the weekly rebuild deployment (needs a Prefect server)")
    p.add_argument("--input", action="append", help="dump file or folder watched by the rebuild")
    p.add_argument("--config", help="recipe TOML; its [orchestrate] cron sets the schedule")
    p.add_argument("--scrape", action="store_true",
                   help="each run also pulls new praw results (always on when [sources] kind = \"praw\")")
    p.add_argument("--warehouse", help="warehouse folder (default: $EXPRESS_WAREHOUSE or ./data)")
    p.set_defaults(func=cmd_schedule)
