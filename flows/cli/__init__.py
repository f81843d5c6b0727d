"""The `express` command line. Each command group lives in a module of this package with a
`register(subparsers)` function; heavy imports (Prefect, spaCy) happen inside the commands.

A user error (missing input, bad recipe, unknown release, corrupt dump, failed gate, ...) ends the
command with a short message naming the file (and line or key) and exit code 2; an internal error
(a bug) exits 1. The traceback is shown only with `--debug` or EXPRESS_DEBUG=1.
"""
from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
import warnings
from importlib import import_module
from typing import Any, NoReturn

from common import stopping
from common.stopping import Terminated
from flows import runtime
from flows.environment import set_defaults

# One line per command group; a new group adds its module here.
COMMAND_MODULES = [
    "flows.cli.core",
    "flows.cli.vocab",
    "flows.cli.release",
    "flows.cli.evaluate",
    "flows.cli.scale",
    "flows.cli.review",
    "flows.cli.acceptance",
    "flows.cli.takedown",
]


class ShortErrors(argparse.ArgumentParser):
    """A bad option is one line naming it and what is wrong (exit 2), not the whole usage; an option
    is its whole name (no abbreviation: `--purge` is not `--purge-releases`). Every subcommand's
    parser is one of these (add_subparsers makes its own class by default)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


class ShowVersion(argparse.Action):
    """`express --version`: the code version a manifest records (package version and git commit),
    found only when asked (it runs git)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the version (as manifests record it) and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> NoReturn:
        from common.versioning import code_version

        print(f"express {code_version()}")
        parser.exit(0)


def parser() -> argparse.ArgumentParser:
    ap = ShortErrors(prog="express", description="Build EXPRESS-style emotion benchmarks and score models on them.")
    ap.add_argument("--version", action=ShowVersion)
    sub = ap.add_subparsers(dest="command", required=True, parser_class=ShortErrors)
    for name in COMMAND_MODULES:
        import_module(name).register(sub)
    for p in sub.choices.values():
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show the full traceback of an error (also: EXPRESS_DEBUG=1)")
    return ap


def debugging(args: argparse.Namespace | None = None) -> bool:
    return bool(getattr(args, "debug", False)) or os.environ.get("EXPRESS_DEBUG", "") not in ("", "0")


def entry() -> int:
    """The console script: as `main`, and `express vocab | head` ends quietly, SIGTERM stops the
    command as Ctrl-C does (both remembered: common/stopping.py), and the runtime's process-wide
    pieces apply (so not made by `main`, which tests call in their own process).

    Once the command is done its process only ends, so what it holds is frozen out of the cycle
    collector: the interpreter's last collection at exit would rescan every object the command
    imported (a build's libraries: about half a million) to free memory the system takes back
    anyway, a wait for nothing the command uses. What exit handlers create is still collected."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    stopping.install()
    try:
        runtime.process_start()
    except ValueError as exc:  # a switch naming no piece
        print(f"express: {exc}", file=sys.stderr)
        return 2
    try:
        return main()
    finally:
        gc.freeze()


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    stopping.named(getattr(args, "command", ""))
    debug = debugging(args)
    set_defaults(quiet_runs=not debug)
    if not debug:
        warnings.simplefilter("ignore", DeprecationWarning)  # libraries' notes to their developers
        # a library's coroutine left unawaited as a flow ends (express's own code has none)
        warnings.filterwarnings("ignore", "coroutine .* was never awaited", RuntimeWarning)
    try:
        runtime.check()
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return _stopped(args.command, "interrupted", 130)
    except Terminated:
        return _stopped(args.command, "terminated", 143)
    except Exception as exc:  # noqa: BLE001 - every error becomes a short message unless debugging
        if debug:
            raise
        from flows.cli.errors import exit_code, explain

        print(f"express {args.command}: {explain(exc, args.command)}", file=sys.stderr)
        return exit_code(exc)


def _stopped(command: str, word: str, code: int) -> int:
    line = f"express {command}: {word}"
    print(line, file=sys.stderr, flush=True)
    stopping.said(line)
    return code


if __name__ == "__main__":
    sys.exit(entry())
