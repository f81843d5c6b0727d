"""`express review export|serve|import|stats|features`: hand review of masks (review/)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from common.errors import USER_ERROR
from flows.cli.core import force_arg, refuse_withdrawn_release, warehouse_arg
from flows.cli.errors import whole_number
from flows.reported import reported


def _release(args: argparse.Namespace, command: str):
    from warehouse.layout import Warehouse
    from warehouse.releases.release import Release

    wh = Warehouse.at(args.warehouse)
    try:
        return wh, Release.find(wh, args.release)
    except (FileNotFoundError, ValueError) as exc:
        print(f"express review {command}: {exc}", file=sys.stderr)
        return wh, None


def _queue(args: argparse.Namespace, command: str):
    """The release's items, sampled as asked, registered so their decisions can be imported."""
    from review.items import release_items, select_items
    from review.registry import register_items

    wh, rel = _release(args, command)
    if rel is None:
        return None
    refuse_withdrawn_release(args, f"review {command}")
    found = release_items(rel, wh.root)
    if rel.withdrawn is not None:  # --force: its taken-down rows stay out
        from warehouse.ledgers.takedowns import TakedownLedger

        matcher = TakedownLedger(wh.root).current().matcher()
        found.items = [it for it in found.items if not matcher.id_hit(it.post_id)]
    try:
        items = select_items(found.items, args.sample, args.seed, args.stratify)
    except ValueError as exc:
        print(f"express review {command}: {exc}", file=sys.stderr)
        return None
    register_items(wh.root, items)
    if found.unaligned:
        print(f"express review {command}: {found.unaligned} of {found.masks} masks left out: their text and "
              "masked text disagree", file=sys.stderr)
    if not found.post_level:
        print(f"express review {command}: the run's post-level disclosures are gone; rule and negation "
              "are unknown and repeated words are told apart by context", file=sys.stderr)
    return wh, rel, found, items


@reported("express-review-export")
def cmd_export(args: argparse.Namespace) -> int:
    from common.files import write_atomic
    from review.labelstudio import labeling_config, task
    from warehouse.ledgers.exports import record_export

    got = _queue(args, "export")
    if got is None:
        return USER_ERROR
    wh, rel, found, items = got
    out = Path(args.out)
    if args.format == "label-studio":
        data = json.dumps([task(it) for it in items], ensure_ascii=False, indent=1) + "\n"
        config = out.with_name(out.stem + ".label-config.xml")
        write_atomic(config, labeling_config().encode("utf-8"))
    else:
        data = "".join(json.dumps(it.to_json(), ensure_ascii=False) + "\n" for it in items)
        config = None
    write_atomic(out, data.encode("utf-8"))
    record_export(wh, out, "review export", rel.release_id)
    if config:
        record_export(wh, config, "review export", rel.release_id)
    print(f"{len(items)} items of {len(found.items)} masks in {rel.dataset}/{rel.version} -> {out}")
    if config:
        print(f"labeling config -> {config}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from urllib.parse import quote

    from review.app import serve
    from review.session import ReviewSession

    got = _queue(args, "serve")
    if got is None:
        return USER_ERROR
    wh, rel, _, items = got
    session = ReviewSession(wh.root, rel.dataset, f"{rel.dataset}/{rel.version}", items)
    url = f"http://127.0.0.1:{args.port}/" + (f"?reviewer={quote(args.reviewer)}" if args.reviewer else "")
    print(f"reviewing {len(items)} items of {rel.dataset}/{rel.version} at {url} (Ctrl-C to stop)", flush=True)
    serve(session, port=args.port)
    return 0


@reported("express-review-import")
def cmd_import(args: argparse.Namespace) -> int:
    from review.imports import ReviewInputError, import_decisions
    from review.ledger import LedgerError
    from warehouse.layout import Warehouse

    wh = Warehouse.at(args.warehouse)
    try:
        result = import_decisions(args.file, wh.root, args.reviewer, args.dataset)
    except (ReviewInputError, LedgerError) as exc:
        print(f"express review import: nothing imported: {exc}", file=sys.stderr)
        return USER_ERROR
    versions = ", ".join(f"{d} v{v}" for d, v in (result.versions or {}).items())
    extra = (f"; {result.cancelled} cancelled annotations and {result.unannotated} unannotated tasks left out"
             if result.format == "label-studio" else "")
    print(f"imported {len(result.entries)} decisions ({result.format}) -> ledger {versions}{extra}")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from review.stats import format_stats, review_stats

    if args.release:
        wh, rel = _release(args, "stats")
        if rel is None:
            return USER_ERROR
    else:
        from warehouse.layout import Warehouse

        wh, rel = Warehouse.at(args.warehouse), None
    stats = review_stats(wh.root, rel)
    if args.json:
        print(json.dumps(stats, indent=2))
    elif not stats:
        print("no review decisions yet" + (f" for {args.release}" if args.release else ""))
    else:
        print("\n\n".join(format_stats(s) for s in stats))
    return 0


@reported("express-review-features")
def cmd_features(args: argparse.Namespace) -> int:
    from review.features import review_feature_rows
    from common.files import write_atomic

    wh, rel = _release(args, "features")
    if rel is None:
        return USER_ERROR
    found = review_feature_rows(rel, wh.root)
    if not found.decided:
        print(f"express review features: no review decisions on the masks of {rel.dataset}/{rel.version}"
              f"{f' ({found.elsewhere} are on other releases)' if found.elsewhere else ''}", file=sys.stderr)
        return USER_ERROR
    out = Path(args.out)
    write_atomic(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in found.rows).encode("utf-8"))
    print(f"{found.summary()} -> {out}")
    return 0


def _sampling(p: argparse.ArgumentParser) -> None:
    p.add_argument("--release", required=True, help="VERSION or DATASET/VERSION")
    p.add_argument("--sample", type=whole_number(1), help="review N masks (default: all), drawn at random")
    p.add_argument("--seed", type=whole_number(0), default=0, help="seed of the sample and of the review order")
    p.add_argument("--stratify", choices=("label", "rule", "pattern"),
                   help="spread the sample over labels, rules or patterns in proportion to their size")
    force_arg(p)
    warehouse_arg(p)


def register(sub: Any) -> None:
    p = sub.add_parser("review", help="hand review of masks: export, serve a review page, import, stats, features")
    rsub = p.add_subparsers(dest="review_command", required=True)

    e = rsub.add_parser("export", help="write one review item per mask (JSONL, or Label Studio tasks + config)")
    _sampling(e)
    e.add_argument("--out", required=True, help="file to write (Label Studio: also FILE.label-config.xml)")
    e.add_argument("--format", choices=("jsonl", "label-studio"), default="jsonl")
    e.set_defaults(func=cmd_export)

    s = rsub.add_parser("serve", help="review masks in the browser at http://127.0.0.1:PORT/")
    _sampling(s)
    s.add_argument("--port", type=whole_number(1, 65535), default=8765)
    s.add_argument("--reviewer", help="your name, filled in on the page")
    s.set_defaults(func=cmd_serve)

    i = rsub.add_parser("import", help="add decisions (our JSONL or a Label Studio JSON export) to the ledger")
    i.add_argument("file")
    i.add_argument("--reviewer", help="reviewer for lines that name none (Label Studio: the one annotator)")
    i.add_argument("--dataset", help="only look items up in this dataset's review folder")
    warehouse_arg(i)
    i.set_defaults(func=cmd_import)

    t = rsub.add_parser("stats", help="reviewed precision (Wilson 95 %% intervals) and agreement")
    t.add_argument("--release", help="VERSION or DATASET/VERSION: only that release's masks")
    t.add_argument("--json", action="store_true", help="print JSON")
    warehouse_arg(t)
    t.set_defaults(func=cmd_stats)

    f = rsub.add_parser("features", help="the reviewed masks of a release as training rows of the acceptance model")
    f.add_argument("--release", required=True, help="VERSION or DATASET/VERSION")
    f.add_argument("--out", required=True, help="JSONL file for `express train-acceptance --review`")
    warehouse_arg(f)
    f.set_defaults(func=cmd_features)
