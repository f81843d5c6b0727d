"""The cycle collector's policy in an express process (pieces `gc_thresholds`,
`freeze_after_setup`, `exit_freeze`).

A process that imports what a build imports creates about half a million objects that live as
long as it does; each full collection rescans them all.
"""
from __future__ import annotations

import gc
import sys

from flows.runtime.pieces import enabled

# A young generation of 10,000 objects instead of 700; the older generations' schedule stays.
GC_THRESHOLDS = (10_000, 10, 10)


def collect_less() -> None:
    """At the start of a command, a local Dask worker and the gate's helper."""
    if enabled("gc_thresholds"):
        gc.set_threshold(*GC_THRESHOLDS)


def freeze_loaded() -> None:
    """After a step's setup: what the process imported and the step loaded lasts as long as the
    process or the step, so later full collections skip it; a teardown still frees what nothing
    holds any more (reference counts), not frozen cycles."""
    if enabled("freeze_after_setup"):
        gc.freeze()


def exit_quickly() -> None:
    """Just before the interpreter exits: its final collections skip every live object. Exit
    handlers still run and files are closed by then."""
    if enabled("exit_freeze"):
        sys.stdout.flush()
        sys.stderr.flush()
        gc.freeze()
