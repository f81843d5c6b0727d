"""The `express` command line. Each command group lives in a module of this package with a
`register(subparsers)` function; heavy imports (Prefect, spaCy) happen inside the commands.

A user error (missing input, bad recipe, unknown release, corrupt dump, failed gate, ...) ends the
command with a short message naming the file (and line or key) and a non-zero exit; the traceback
is shown only with `--debug` or EXPRESS_DEBUG=1.
"""
from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
import warnings
from importlib import import_module

# One line per command group; a new group adds its module here.
COMMAND_MODULES = [
    "flows.cli.core",
    "flows.cli.vocab",
    "flows.cli.release",
    "flows.cli.evaluate",
    "flows.cli.scale",
    "flows.cli.review",
    "flows.cli.acceptance",
]

# Nothing reaches out at run time unless the user asks for a live client (praw, a chat server).
OFFLINE_DEFAULTS = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "GX_ANALYTICS_ENABLED": "false"}
# Prefect's flow and task run loggers report a failure with its traceback at ERROR level.
QUIET_RUN_LOGS = {"PREFECT_LOGGING_LOGGERS_PREFECT_FLOW_RUNS_LEVEL": "CRITICAL",
                  "PREFECT_LOGGING_LOGGERS_PREFECT_TASK_RUNS_LEVEL": "CRITICAL"}


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="express", description="Build EXPRESS-style emotion benchmarks and score models on them.")
    sub = ap.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        import_module(name).register(sub)
    for p in sub.choices.values():
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show the full traceback of an error (also: EXPRESS_DEBUG=1)")
    return ap


def debugging(args: argparse.Namespace | None = None) -> bool:
    return bool(getattr(args, "debug", False)) or os.environ.get("EXPRESS_DEBUG", "") not in ("", "0")


def entry() -> int:
    """The console script: as `main`, and `express vocab | head` ends quietly (a process-wide
    setting, so not made by `main`, which tests call in their own process)."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        return main()
    finally:  # also when a command ends with SystemExit
        skip_exit_collection()


def skip_exit_collection() -> None:
    """Freeze every live object just before the interpreter exits, so its final garbage collections
    skip them: a process that imported what a build imports (Prefect, GX, pandas, Presidio) exits
    in 0.08 s instead of 1.16 (measured). Exit handlers still run and files are closed by then;
    only collecting cycles that are about to vanish with the process is skipped."""
    sys.stdout.flush()
    sys.stderr.flush()
    gc.freeze()


def main(argv: list[str] | None = None) -> int:
    for key, value in OFFLINE_DEFAULTS.items():
        os.environ.setdefault(key, value)
    args = parser().parse_args(argv)
    debug = debugging(args)
    if not debug:  # Prefect would log each failed run's traceback; the reason is printed below instead
        os.environ.update(QUIET_RUN_LOGS)
        warnings.simplefilter("ignore", DeprecationWarning)  # libraries' notes to their developers
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print(f"express {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - every error becomes a short message unless debugging
        if debug:
            raise
        from flows.cli.errors import explain

        print(f"express {args.command}: {explain(exc, args.command)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(entry())
