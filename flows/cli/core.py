"""Core `express` commands: demo, build, extract, scrub (releases: release.py; evaluation: evaluate.py)."""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flows import prefect_api, runtime
from flows.cli.errors import recipe_number, whole_number
from flows.reported import reported

REPO = Path(__file__).resolve().parents[2]
DEMO_CONFIG = REPO / "configs" / "demo.toml"


def warehouse_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--warehouse", type=folder_path,
                   help="warehouse folder (default: $EXPRESS_WAREHOUSE, else data/ in the express checkout)")


def folder_path(text: str) -> str:
    """An argparse type for a folder: an empty path is refused, not read as 'the default'."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a folder, or leave the option out for the default")
    return text


def force_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--force", action="store_true",
                   help="read a withdrawn release all the same, without its taken-down rows (docs/takedowns.md)")


def refuse_withdrawn_release(args: argparse.Namespace, command: str) -> None:
    """A command that writes from a release refuses a withdrawn one unless --force (exit 2)."""
    from warehouse.layout import Warehouse
    from warehouse.releases.release import Release
    from warehouse.ledgers.withdrawn import refuse_withdrawn

    release = Release.find(Warehouse.at(args.warehouse), args.release)
    refuse_withdrawn(release.release_id, release.withdrawn, command, args.force)


DEMO_PREDICTORS = ("most-frequent", "context-lexicon", "tfidf-logreg")


def demo_months(posts: int) -> tuple[Any, Any]:
    """The demo's two dumps: a month of `posts` posts, then a fifth as many in the next month, some
    with personal data to scrub. A rebuild adds the second to the first release, so the demo's
    report compares two releases."""
    from sources.demo import DemoSpec

    return DemoSpec(posts=posts), DemoSpec(posts=max(20, posts // 5), seed=14, month="2024-02", first_id=posts,
                                           pii=0.15)


def cmd_demo(args: argparse.Namespace) -> int:
    """The whole pipeline on the offline demo corpus: build, rebuild with a second month, evaluate
    baselines, report, card."""
    from pipeline.plan import BuildRequest, plan_build
    from sources.demo import write_demo_dump
    from warehouse.layout import Warehouse

    wh = Warehouse.at(args.warehouse)
    workdir = Path(args.workdir) if args.workdir else wh.inputs_dir("demo")
    with runtime.session() as wait_for_api:  # the temporary API starts while the corpus is written
        first, second = demo_months(args.posts)
        dumps = [str(write_demo_dump(workdir, first)), str(write_demo_dump(workdir, second))]
        print(f"demo corpus: {dumps[0]}, then {dumps[1]}")
        plan = plan_build(BuildRequest(wh.root, dumps[:1], str(DEMO_CONFIG), workers=0))
        return _demo(wh, plan, dumps, wait_for_api)


def _demo(wh: Any, plan: Any, dumps: list[str], wait_for_api: Callable[[], None]) -> int:  # Warehouse, BuildPlan
    from evaluation.outputs.board import board_rows, format_board
    from evaluation.outputs.runs import leaderboard
    from pipeline.plan import BuildRequest, plan_build
    from flows.build import build_flow
    from evaluation.commands import evaluate
    from evaluation.run import EvalRequest
    from flows.rebuild import rebuild_flow
    from pipeline.release_docs import write_card, write_report
    from warehouse.releases.diff import diff_releases
    from warehouse.releases.release import Release

    wait_for_api()
    build_flow(plan)
    rebuilt = rebuild_flow(plan_build(BuildRequest(wh.root, dumps, str(DEMO_CONFIG), workers=0)))
    release_id = rebuilt.release.release_id if rebuilt.release else str(rebuilt.parent)  # up to date: the latest
    rel = Release.find(wh, release_id)
    manifest = rel.manifest()
    runs = {}
    for name in DEMO_PREDICTORS:
        print(f"[evaluate] {name} on {release_id} test")
        runs[name] = evaluate(str(wh.root), release_id, EvalRequest(name, bootstrap=200).params())
    report = write_report(wh, release_id)
    card = write_card(wh, release_id, wh.card_dir(rel.dataset, rel.version))
    f = manifest["funnel"]
    print("\n== express demo ==")
    print(f"funnel:   read {f['read']} = kept {f['kept']} + dropped {sum(f['dropped'].values())} "
          f"+ malformed {f['malformed']}")
    print(f"dropped:  {json.dumps(f['dropped'])}")
    print(f"release:  {rel.path}  rows {json.dumps(manifest['rows'])}")
    if manifest.get("parent_version"):
        older = Release.find(wh, f"{rel.dataset}/{manifest['parent_version']}")
        d = diff_releases(older, rel)
        added = sum(s["added"] for s in d["splits"].values())
        removed = sum(s["removed"] for s in d["splits"].values())
        print(f"parent:   {older.release_id}; rows +{added} -{removed}, "
              f"label JS divergence {d['labels']['js_divergence']:.4f}")
    print(f"gate:     {'passed' if manifest.get('gate', {}).get('success', True) else 'FAILED'}")
    print(f"report:   {report}")
    print(f"card:     {card['readme']}")
    print(f"scores:   most-frequent on test: {json.dumps(runs['most-frequent']['metrics'])}")
    print("leaderboard (test split):")
    print(format_board(board_rows(leaderboard(wh, release_id, "test", latest_only=True)), "text"))
    return 0


def build_plan(args: argparse.Namespace, scrape: bool = False, watch: bool = False):  # -> BuildPlan
    """The build the command line asks for, checked before any flow starts (pipeline/plan.py); the
    recipe's Prefect API, if it names one, is the command's."""
    from pipeline.plan import BuildRequest, plan_build

    plan = plan_build(BuildRequest(args.warehouse, args.input or [], args.config, args.shard_lines,
                                   getattr(args, "run_id", None), getattr(args, "resume", None), args.workers,
                                   args.dask_address, getattr(args, "praw_query", None) or (), scrape=scrape,
                                   watch=watch))
    prefect_api.from_recipe(plan.recipe.orchestrate.prefect_api_url)
    return plan


def cmd_build(args: argparse.Namespace) -> int:
    """The one build: sharded and resumable; in this process for one shard's work, else on Dask.
    Its temporary API starts once the request is checked, while the build's code loads."""
    plan = build_plan(args)
    with runtime.session(temporary_api=not plan.dask_address) as wait_for_api:
        from flows.build import build_flow

        wait_for_api()
        print(build_flow(plan).release.manifest)
    return 0


def build_arguments(p: argparse.ArgumentParser, rebuild: bool = False) -> None:
    """The options of `build` and (`rebuild`) of `rebuild`."""
    if rebuild:
        p.add_argument("--input", action="append",
                       help="dump file or folder of dumps; files already in the latest release are not re-read")
    else:
        p.add_argument("--input", action="append", help="dump file (.zst, .jsonl, .ndjson) or folder; repeatable")
    p.add_argument("--config", help="recipe TOML (default: built-in defaults)")
    if rebuild:
        p.add_argument("--scrape", action="store_true",
                       help="also pull live results newer than the stored checkpoint with praw, as [sources] asks "
                            "(always on when [sources] kind = \"praw\")")
    else:
        p.add_argument("--praw-query", action="append", metavar="TERM",
                       help="pull Reddit search results for TERM with praw (repeatable; overrides [sources] terms)")
    p.add_argument("--workers", type=recipe_number("orchestrate", "workers"), default=None,
                   help="local Dask worker processes (default: 0 = this process for inputs under "
                        "[orchestrate] in_process_below_mb, else [orchestrate] workers)")
    p.add_argument("--dask-address", help="use an existing Dask scheduler, e.g. tcp://10.0.0.5:8786")
    p.add_argument("--shard-lines", type=recipe_number("orchestrate", "shard_lines"), default=None,
                   help="raw lines per shard (default: [orchestrate] shard_lines); memory is bounded by it")
    if not rebuild:
        p.add_argument("--run-id", help="run id (default: derived from inputs, recipe, shard size, code version)")
        p.add_argument("--resume", metavar="RUN_ID", help="resume a run by id with its recorded inputs and recipe")
    warehouse_arg(p)


@reported("express-extract")
def cmd_extract(args: argparse.Namespace) -> int:
    from extractors.jsonl import extract_jsonl

    n = extract_jsonl(args.input, args.output, keep_negated=args.keep_negated, workers=args.workers,
                      forms=args.forms, acceptance=args.acceptance)
    print(f"wrote {n} lines to {args.output}", file=sys.stderr)
    return 0


def _record_outside(warehouse: str | None, path: str, command: str) -> None:
    """Note a file written from texts that may be a release's in the warehouse, when there is one."""
    from warehouse.ledgers.exports import record_export
    from warehouse.layout import Warehouse

    wh = Warehouse.at(warehouse)
    if wh.root.is_dir():
        record_export(wh, path, command)


@reported("express-scrub")
def cmd_scrub(args: argparse.Namespace) -> int:
    """The release's PII scrubber (the recipe's [privacy] switches) over a JSONL of {id, text}."""
    from privacy.scrub_file import scrub_jsonl
    from privacy.scrubber import Scrubber
    from schemas.config import load_recipe

    scrubber = Scrubber.from_config(load_recipe(args.config).privacy)
    n = scrub_jsonl(args.input, args.output, scrubber)
    _record_outside(args.warehouse, args.output, "scrub")
    print(f"wrote {n} lines to {args.output} (kinds: {', '.join(scrubber.kinds) or 'none'})", file=sys.stderr)
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help="generate the demo corpus, build two releases, score baselines, report")
    p.add_argument("--workdir", help="where the demo dumps are written (default: <warehouse>/inputs/demo)")
    p.add_argument("--posts", type=whole_number(1), default=3000,
                   help="demo posts of the first month (the second has a fifth as many)")
    warehouse_arg(p)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("build", help="build and publish a release from dumps or a praw pull (resumable)")
    build_arguments(p)
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("extract", help="find disclosures in a JSONL file of {id, text}")
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--keep-negated", action="store_true", help="mask negated disclosures too")
    p.add_argument("--workers", type=whole_number(1), default=1, help="processes to use (output is identical)")
    p.add_argument("--forms", choices=("reference", "extended"), default="reference",
                   help="trigger forms: EXPRESS's only (default), or also I'm feeling/I've been/don't feel")
    p.add_argument("--acceptance", choices=("on", "off"), default="on",
                   help="drop the pattern hits the shipped acceptance model rejects (default), or keep every hit")
    p.set_defaults(func=cmd_extract)

    p = sub.add_parser("scrub", help="replace personal data in a JSONL file of {id, text} as a release does")
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--config", help="recipe TOML whose [privacy] scrub_* switches pick the kinds (default: all on)")
    p.add_argument("--warehouse", help="the warehouse that records the output as a copy its takedowns must name "
                                       "(default: $EXPRESS_WAREHOUSE or ./data, when it exists)")
    p.set_defaults(func=cmd_scrub)



