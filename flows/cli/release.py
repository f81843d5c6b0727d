"""Release commands: releases (list), diff, report (HTML data-quality page), card (Hugging Face export)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from flows.cli.core import warehouse_arg
from flows.cli.errors import whole_number
from flows.reported import reported


def cmd_releases(args: argparse.Namespace) -> int:
    from warehouse.releases.integrity import ReleaseChanged, read_manifest
    from warehouse.layout import Warehouse
    from warehouse.releases.release import Release
    from warehouse.releases.stats import rows_by_month
    from warehouse.ledgers.withdrawn import describe, withdrawal

    wh = Warehouse.at(args.warehouse)
    damaged = 0
    for release in wh.releases():
        try:  # one damaged release is listed as such; the others as always
            m = read_manifest(release.root)
            record = withdrawal(release.root)
            status = f"\t{describe(record)}" if record is not None else ""
            purged = record is not None and record.get("purged")  # its data files are gone: no months to count
            months = {} if purged else rows_by_month(Release.at(release.root).split_files())  # the windows worth scoring
        except ReleaseChanged as exc:
            damaged += 1
            print(f"{release.root.parent.name}/{release.root.name}\tdamaged: {exc}")
            continue
        print(f"{m['dataset']}/{m['version']}\t{m.get('created', '')}\trows={json.dumps(m['rows'])}"
              f"\tmonths={json.dumps(months)}{status}")
    if damaged:
        print(f"express releases: {damaged} damaged release(s) listed; commands that read one refuse it",
              file=sys.stderr)
    if args.views:
        from warehouse.releases.catalog import list_views

        for name in list_views(wh):
            print(f"view\t{name}")
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from warehouse.releases.diff import diff_releases, format_diff
    from warehouse.layout import Warehouse
    from warehouse.releases.release import Release

    wh = Warehouse.at(args.warehouse)
    d = diff_releases(Release.find(wh, args.a), Release.find(wh, args.b), args.top)
    print(json.dumps(d, indent=2) if args.json else format_diff(d))
    return 0


@reported("express-report")
def cmd_report(args: argparse.Namespace) -> int:
    from pipeline.release_docs import write_report
    from warehouse.layout import Warehouse

    print(write_report(Warehouse.at(args.warehouse), args.release, args.out))
    return 0


@reported("express-card")
def cmd_card(args: argparse.Namespace) -> int:
    from pipeline.release_docs import write_card
    from warehouse.layout import Warehouse

    print(write_card(Warehouse.at(args.warehouse), args.release, args.out, args.url or "")["readme"])
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("releases", help="list published releases, with their rows per month of posting (UTC) and split")
    p.add_argument("--views", action="store_true", help="also list the DuckDB catalog views")
    warehouse_arg(p)
    p.set_defaults(func=cmd_releases)

    p = sub.add_parser("diff", help="rows added/removed per split and label change between two releases")
    p.add_argument("a", help="VERSION or DATASET/VERSION (the older one)")
    p.add_argument("b", help="VERSION or DATASET/VERSION (the newer one)")
    p.add_argument("--top", type=whole_number(1), default=15, help="how many label changes to list")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    warehouse_arg(p)
    p.set_defaults(func=cmd_diff)

    p = sub.add_parser("report", help="write a self-contained HTML data-quality report of a release")
    p.add_argument("--release", required=True, help="VERSION or DATASET/VERSION")
    p.add_argument("--out", help="HTML file (default: <warehouse>/reports/<dataset>/<version>/report.html)")
    warehouse_arg(p)
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("card", help="export a release as a Hugging Face dataset folder (card, Parquet, Croissant)")
    p.add_argument("--release", required=True, help="VERSION or DATASET/VERSION")
    p.add_argument("--out", required=True, help="folder to write README.md, data/ and croissant.json into")
    p.add_argument("--url", help="dataset URL for the Croissant file (default: the Hub URL by name)")
    warehouse_arg(p)
    p.set_defaults(func=cmd_card)
