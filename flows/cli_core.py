"""Core `express` commands: demo, build, extract, score, evaluate (releases moved to cli_release)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from flows import prefect_env

REPO = Path(__file__).resolve().parent.parent
DEMO_CONFIG = REPO / "configs" / "demo.toml"


def warehouse_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--warehouse", help="warehouse folder (default: $EXPRESS_WAREHOUSE or ./data)")


def cmd_demo(args: argparse.Namespace) -> int:
    from sources.demo import DemoSpec, write_demo_dump
    from warehouse.layout import Warehouse

    wh = Warehouse.at(args.warehouse)
    workdir = Path(args.workdir) if args.workdir else wh.root / "inputs" / "demo"
    dump = write_demo_dump(workdir, DemoSpec(posts=args.posts))
    print(f"demo corpus: {dump}")
    prefect_env.configure()
    from flows.build import build_flow
    from flows.evaluate import evaluate_flow

    built = build_flow([str(dump)], str(wh.root), str(DEMO_CONFIG))
    rel = built["release"]
    manifest = json.loads(Path(rel["manifest"]).read_text())
    scores = evaluate_flow(str(wh.root), f"{rel['dataset']}/{rel['version']}", "test", "most-frequent")
    f = manifest["funnel"]
    print("\n== express demo ==")
    print(f"funnel:   read {f['read']} = kept {f['kept']} + dropped {sum(f['dropped'].values())} "
          f"+ malformed {f['malformed']}")
    print(f"dropped:  {json.dumps(f['dropped'])}")
    print(f"release:  {rel['path']}  rows {json.dumps(manifest['rows'])}")
    print(f"scores:   most-frequent on test: {json.dumps(scores['metrics'])}")
    print(f"run:      {scores['path']}")
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
        n = extract_jsonl(args.input, args.output, keep_negated=args.keep_negated, workers=args.workers)
    except (InputError, FileNotFoundError) as exc:
        print(f"express extract: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {n} lines to {args.output}", file=sys.stderr)
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    from evaluation.score_file import score_file
    from schemas.lexicon import default_decomposition, load_decomposition

    dec = load_decomposition(args.lexicon) if args.lexicon else default_decomposition()
    try:
        result = score_file(args.predictions, dec, args.labels_field, args.output_field)
    except (ValueError, FileNotFoundError) as exc:
        print(f"express score: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    prefect_env.configure()
    from flows.evaluate import evaluate_flow
    from warehouse.layout import Warehouse

    out = evaluate_flow(str(Warehouse.at(args.warehouse).root), args.release, args.split, args.predictor,
                        args.setting, args.limit)
    print(json.dumps({"run_id": out["run_id"], "path": out["path"], **out["metrics"]}))
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
    p.set_defaults(func=cmd_extract)

    p = sub.add_parser("score", help="EXPRESS metrics for a predictions file (JSONL or CSV)")
    p.add_argument("--predictions", required=True)
    p.add_argument("--lexicon", help="decomposition CSV (default: the shipped one)")
    p.add_argument("--labels-field", default="labels")
    p.add_argument("--output-field", default="output", help="field holding the raw model answer")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("evaluate", help="score a predictor on a published release")
    p.add_argument("--release", required=True, help="VERSION or DATASET/VERSION")
    p.add_argument("--split", default="test")
    p.add_argument("--predictor", default="most-frequent")
    p.add_argument("--setting", default="zero-shot")
    p.add_argument("--limit", type=int)
    warehouse_arg(p)
    p.set_defaults(func=cmd_evaluate)


