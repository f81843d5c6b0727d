"""`express takedown add|list|apply|sync|verify`: posts and authors leave the benchmark
(docs/takedowns.md)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from common.errors import UserError
from flows import prefect_api, runtime
from flows.cli.core import warehouse_arg
from flows.reported import reported


class LeftOver(UserError):
    """verify found a taken-down post in the warehouse (the files are listed)."""


@reported("express-takedown-add")
def cmd_add(args: argparse.Namespace) -> int:
    from warehouse.layout import Warehouse
    from warehouse.ledgers.takedowns import TakedownLedger

    if not (args.post or args.author):
        raise UserError("nothing to take down: give --post ID or --author NAME")
    version = TakedownLedger(Warehouse.at(args.warehouse).root).add(args.post or [], args.author or [], args.reason)
    print(f"takedown ledger version {version}: {len(args.post or [])} post(s), {len(args.author or [])} author(s) "
          "added; `express takedown apply` takes them out of the warehouse")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from warehouse.layout import Warehouse
    from warehouse.ledgers.takedowns import TakedownLedger

    ledger = TakedownLedger(Warehouse.at(args.warehouse).root)
    resolved, by_author, prints = set(), set(), 0
    for n, entries in ledger.batches():
        for e in entries:
            if e.kind == "resolved":
                resolved.add(e.post_id)
                by_author.update([e.post_id] if e.author_hmac else [])
                prints += len(e.texts)
                continue
            who = e.post_id if e.kind == "post" else f"author {e.author_hmac[:12]}…"
            print(f"{n}\t{e.time}\t{e.kind}\t{who}\t{e.source}\t{e.reason}")
    taken = ledger.current()
    print(f"version {taken.version} (sha256 {taken.sha256[:12] or '-'}): {len(taken.posts)} post(s) taken down, "
          f"{len(by_author)} of them found by author; {len(taken.authors)} author(s); "
          f"{prints} text fingerprint(s)")
    applied = ledger.paths.applied
    if applied.exists():
        state = json.loads(applied.read_text())
        print(f"last applied: version {state['version']} at {state['time']}"
              + ("" if state["version"] == taken.version else "; `express takedown apply` applies the rest"))
    return 0


def cmd_apply(args: argparse.Namespace) -> int:
    from warehouse.layout import Warehouse

    wh = Warehouse.at(args.warehouse)
    with runtime.session() as wait_for_api:
        from flows.takedown import apply_flow

        wait_for_api()
        done = apply_flow(str(wh.root), args.purge_releases)
    _say_applied(done)
    return 0


def _say_applied(done: dict[str, Any]) -> None:
    print(f"takedown ledger version {done['ledger_version']}: {done['posts']} post(s), {done['authors']} author(s)")
    if not done["posts"] and not done["authors"]:
        print("nothing is taken down")
        return
    for parent, new in done["published"].items():
        print(f"published {new} without the taken-down rows of {parent}")
    for release, record in done["withdrawn"].items():
        print(f"withdrawn {release}: {record['rows']} rows of {record['posts']} posts")
    print(f"rewritten: {done['build_folders']} build folders, {len(done['files'])} other files "
          f"({done['evaluation_rows']} evaluation rows), {len(done['docs'])} reports and cards")
    for path, where in done["outside"].items():
        print(f"outside the warehouse, yours to delete or export again: {path}: {where}", file=sys.stderr)
    for run in done["busy_runs"]:
        print(f"run {run} is being built: run `express takedown apply` again once it ends", file=sys.stderr)
    if done["purged"]:
        print(f"purged (files deleted): {', '.join(done['purged'])}")
    if done["kept"]:
        print(f"withdrawn releases keep their files: {', '.join(done['kept'])}; `express takedown apply "
              "--purge-releases` deletes them")


def cmd_sync(args: argparse.Namespace) -> int:
    from pipeline.run import load_any_recipe
    from warehouse.layout import Warehouse

    recipe = load_any_recipe(args.config)
    prefect_api.from_recipe(recipe.orchestrate.prefect_api_url)
    with runtime.session() as wait_for_api:
        from flows.takedown import sync_flow

        wait_for_api()
        done = sync_flow(str(Warehouse.at(args.warehouse).root), recipe.sources, args.dataset)
    for release, n in done["asked"].items():
        print(f"asked Reddit about {n} posts of {release}")
    print(f"{len(done['gone'])} deleted or removed on Reddit, added to the takedown ledger "
          f"(version {done['ledger_version']})" + ("; `express takedown apply` takes them out" if done["gone"] else ""))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from takedowns.verify import verify
    from warehouse.layout import Warehouse

    hits = verify(Warehouse.at(args.warehouse), outside=args.outside)
    if args.json:
        print(json.dumps([{"path": str(h.path), "where": h.where, "outside": h.outside} for h in hits], indent=2))
    else:
        print("\n".join(map(str, hits)) or "no taken-down post in the warehouse (withdrawn releases not read"
              + ("; the copies written outside it read too)" if args.outside else ")"))
    if hits:
        raise LeftOver(f"{len(hits)} file(s) hold a taken-down post, first {hits[0]}")
    return 0


Option = tuple[tuple[str, ...], dict[str, Any]]  # an option's flags and add_argument's keywords

# Each subcommand: what runs it, its help, its options (all take --warehouse and --debug).
COMMANDS: dict[str, tuple[Any, str, list[Option]]] = {
    "add": (cmd_add, "add posts (ids, t3_ or not) and authors (kept as a keyed hash) to the ledger", [
        (("--post",), {"action": "append", "metavar": "ID", "help": "a post id, t3_abc or abc (repeatable)"}),
        (("--author",), {"action": "append", "metavar": "NAME", "help": "a Reddit user name (repeatable)"}),
        (("--reason",), {"required": True, "help": "why (kept in the ledger)"})]),
    "list": (cmd_list, "the takedown ledger", []),
    "apply": (cmd_apply, "publish the next versions without taken-down rows, withdraw the older ones, and take "
                         "the posts out of every other file", [
        (("--purge-releases",), {"action": "store_true",
                                 "help": "also delete the files of withdrawn releases (their manifest stays)"})]),
    "sync": (cmd_sync, "ask Reddit (praw) about the latest releases' posts; add those deleted or removed", [
        (("--config",), {"help": "recipe TOML whose [sources] sets praw's site, API and retries"}),
        (("--dataset",), {"action": "append", "help": "only this dataset (repeatable; default: all)"})]),
    "verify": (cmd_verify, "look through the warehouse for any taken-down post; exit 2 naming the files", [
        (("--json",), {"action": "store_true", "help": "print the hits as JSON"}),
        (("--outside",), {"action": "store_true",
                          "help": "also read the copies express wrote outside the warehouse (card, export, review "
                                  "export, scrub and report --out)"})]),
}


def register(sub: Any) -> None:
    p = sub.add_parser("takedown", help="take posts and authors out of every release and file (docs/takedowns.md)")
    commands = p.add_subparsers(dest="takedown_command", required=True)
    for name, (func, help_text, options) in COMMANDS.items():
        command = commands.add_parser(name, help=help_text)
        for flags, keywords in options:
            command.add_argument(*flags, **keywords)
        warehouse_arg(command)
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                             help="show the full traceback of an error (also: EXPRESS_DEBUG=1)")
        command.set_defaults(func=_with_key_checked(func))


def _with_key_checked(func: Any) -> Any:
    """Every takedown command first refuses a ledger whose hashing key is lost (docs/takedowns.md)."""
    def run(args: argparse.Namespace) -> int:
        from warehouse.layout import Warehouse
        from warehouse.ledgers.takedowns import TakedownLedger

        TakedownLedger(Warehouse.at(args.warehouse).root).key()
        return func(args)

    return run
