"""Core `express` commands: demo, build, extract (releases: release.py; evaluation: evaluate.py)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from flows import prefect_env

REPO = Path(__file__).resolve().parents[2]
DEMO_CONFIG = REPO / "configs" / "demo.toml"


def warehouse_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--warehouse", help="warehouse folder (default: $EXPRESS_WAREHOUSE or ./data)")


DEMO_PREDICTORS = ("most-frequent", "context-lexicon", "tfidf-logreg")


def cmd_demo(args: argparse.Namespace) -> int:
    """The whole pipeline on the offline demo corpus: build, evaluate baselines, report, card."""
    from sources.demo import DemoSpec, write_demo_dump
    from warehouse.layout import Warehouse

    wh = Warehouse.at(args.warehouse)
    workdir = Path(args.workdir) if args.workdir else wh.root / "inputs" / "demo"
    dump = write_demo_dump(workdir, DemoSpec(posts=args.posts))
    print(f"demo corpus: {dump}")
    prefect_env.configure()
    from evaluation.runs import format_table, leaderboard
    from flows.build import build_flow
    from flows.evaluate import evaluate_flow
    from flows.release_flows import card_flow, report_flow

    built = build_flow([str(dump)], str(wh.root), str(DEMO_CONFIG))
    rel = built["release"]
    release_id = f"{rel['dataset']}/{rel['version']}"
    manifest = json.loads(Path(rel["manifest"]).read_text())
    runs = {}
    for name in DEMO_PREDICTORS:
        print(f"[evaluate] {name} on {release_id} test")
        runs[name] = evaluate_flow(str(wh.root), release_id, "test", name, bootstrap=200)
    report = report_flow(str(wh.root), release_id)
    card = card_flow(str(wh.root), release_id, str(wh.root / "cards" / rel["dataset"] / rel["version"]))
    f = manifest["funnel"]
    print("\n== express demo ==")
    print(f"funnel:   read {f['read']} = kept {f['kept']} + dropped {sum(f['dropped'].values())} "
          f"+ malformed {f['malformed']}")
    print(f"dropped:  {json.dumps(f['dropped'])}")
    print(f"release:  {rel['path']}  rows {json.dumps(manifest['rows'])}")
    print(f"gate:     {'passed' if manifest.get('gate', {}).get('success', True) else 'FAILED'}")
    print(f"report:   {report}")
    print(f"card:     {card['readme']}")
    print(f"scores:   most-frequent on test: {json.dumps(runs['most-frequent']['metrics'])}")
    print("leaderboard (test split):")
    print(format_table(leaderboard(wh, release_id, "test", latest_only=True), "text"))
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    prefect_env.configure()
    from flows.build import build_flow
    from schemas.config import load_recipe
    from warehouse.layout import Warehouse

    try:
        if not args.input and not args.praw_query and load_recipe(args.config).sources.kind != "praw":
            raise ValueError("no input: give --input FILE, --praw-query TERM, or a recipe with [sources] kind = \"praw\"")
        built = build_flow([str(Path(p)) for p in args.input or []], str(Warehouse.at(args.warehouse).root),
                           args.config, praw_terms=args.praw_query or None)
    except Exception as exc:  # one-line reason, non-zero exit: nothing was published
        reason = " ".join(str(exc).split()) or type(exc).__name__
        print(f"express build: nothing published: {reason}", file=sys.stderr)
        return 1
    print(built["release"]["manifest"])
    return 0


def cmd_extract(args: argparse.Namespace) -> int:
    from extractors.jsonl import InputError, extract_jsonl

    try:
        n = extract_jsonl(args.input, args.output, keep_negated=args.keep_negated, workers=args.workers,
                          forms=args.forms)
    except (InputError, FileNotFoundError) as exc:
        print(f"express extract: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {n} lines to {args.output}", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="generate the demo corpus, build a release and score a baseline")
    p.add_argument("--workdir", help="where the demo dump is written (default: <warehouse>/inputs/demo)")
    p.add_argument("--posts", type=int, default=3000, help="number of demo posts")
    warehouse_arg(p)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("build", help="build and publish a release from dump files")
    p.add_argument("--input", action="append", help="dump file (.zst, .jsonl, .ndjson); repeatable")
    p.add_argument("--config", help="recipe TOML (default: built-in defaults)")
    p.add_argument("--praw-query", action="append", metavar="TERM",
                   help="scrape Reddit search for TERM with praw (repeatable; overrides [sources] terms)")
    warehouse_arg(p)
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("extract", help="find disclosures in a JSONL file of {id, text}")
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--keep-negated", action="store_true", help="mask negated disclosures too")
    p.add_argument("--workers", type=int, default=1, help="processes to use (output is identical)")
    p.add_argument("--forms", choices=("reference", "extended"), default="reference",
                   help="trigger forms: EXPRESS's only (default), or also I'm feeling/I've been/don't feel")
    p.set_defaults(func=cmd_extract)



