"""The runtime's pieces by name, and the one switch that turns them off.

`EXPRESS_PLAIN=1` (or `all`) turns every piece off; `EXPRESS_PLAIN=name,name` turns off those
only, which is how bench/runtime.py measures what each one buys. Processes a command starts
(Dask workers, the API server) inherit the switch with the environment. A
release is the same, byte for byte, either way (tests/flows/runtime/test_plain_build.py).
"""
from __future__ import annotations

import os

SWITCH = "EXPRESS_PLAIN"

# Each piece and what it buys; the figures are in bench/README.md ("Runtime pieces").
PIECES: dict[str, str] = {
    "retry_soon": "the temporary API asks for a quick retry when its database is busy (Prefect's client waits 2 s, 4 s, ...)",
    "no_heartbeats": "flow runs under the temporary API end without waiting for Prefect's heartbeat thread",
    "gc_thresholds": "the cycle collector runs less often while a process imports what a build imports",
    "jemalloc": "pyarrow allocates from jemalloc, which returns what a build frees",
    "dask_quiet": "local Dask workers run no profiler and tick less often",
    "dask_no_trim": "local Dask workers keep glibc's adaptive trim threshold (Dask's makes spaCy re-fault its arrays)",
    "openblas": "spaCy's layers multiply on numpy's OpenBLAS with one thread, not blis",
    "hidden_imports": "spaCy and Presidio load without torch and transformers",
    "gx_imports": "Great Expectations loads without SQLAlchemy, scipy.stats and altair",
}


def check() -> None:
    """Refuse a switch naming no piece (a typo would measure nothing)."""
    value = os.environ.get(SWITCH, "").strip()
    if value in ("", "0", "1", "all"):
        return
    unknown = sorted({p.strip() for p in value.split(",")} - set(PIECES) - {""})
    if unknown:
        raise ValueError(f"{SWITCH}={value}: no runtime piece named {', '.join(unknown)} "
                         f"(pieces: {', '.join(PIECES)}; or 1 for all)")


def enabled(piece: str) -> bool:
    """Is `piece` on in this process (the switch leaves it on)?"""
    if piece not in PIECES:
        raise KeyError(f"no runtime piece named {piece!r}")
    value = os.environ.get(SWITCH, "").strip()
    if value in ("", "0"):
        return True
    if value in ("1", "all"):
        return False
    return piece not in {p.strip() for p in value.split(",")}
