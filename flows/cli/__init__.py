"""The `express` command line. Each command group lives in a module of this package with a
`register(subparsers)` function; heavy imports (Prefect, spaCy) happen inside the commands."""
from __future__ import annotations

import argparse
import os
import signal
import sys
from importlib import import_module

# One line per command group; a new group adds its module here.
COMMAND_MODULES = [
    "flows.cli.core",
    "flows.cli.vocab",
    "flows.cli.release",
    "flows.cli.evaluate",
    "flows.cli.scale",
    "flows.cli.acceptance",
]


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="express", description="Build EXPRESS-style emotion benchmarks and score models on them.")
    sub = ap.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        import_module(name).register(sub)
    return ap


# Nothing reaches out at run time unless the user asks for a live client (praw, a chat server).
OFFLINE_DEFAULTS = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "GX_ANALYTICS_ENABLED": "false"}


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `express vocab | head` ends quietly
    for key, value in OFFLINE_DEFAULTS.items():
        os.environ.setdefault(key, value)
    args = parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
