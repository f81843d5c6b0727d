"""The cycle collector's policy in an express process (piece `gc_thresholds`).

A process that imports what a build imports creates about half a million objects that live as
long as it does; each full collection rescans them all.
"""
from __future__ import annotations

import gc

from flows.runtime.pieces import enabled

# A young generation of 10,000 objects instead of 700; the older generations' schedule stays.
GC_THRESHOLDS = (10_000, 10, 10)


def collect_less() -> None:
    """At the start of a command and of a local Dask worker."""
    if enabled("gc_thresholds"):
        gc.set_threshold(*GC_THRESHOLDS)
