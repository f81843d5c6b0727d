"""The runtime's pieces by name, and the one switch that turns them off.

`EXPRESS_PLAIN=1` (or `all`) turns every piece off; `EXPRESS_PLAIN=name,name` turns off those
only, which is how bench/runtime.py measures what each one buys. Processes a command starts
(Dask workers, the gate's helper, the API server) inherit the switch with the environment. A
release is the same, byte for byte, either way (tests/flows/runtime/test_plain_build.py).
"""
from __future__ import annotations

import os

SWITCH = "EXPRESS_PLAIN"

# Each piece and what it buys; the figures are in bench/README.md ("Runtime pieces").
PIECES: dict[str, str] = {
    "gate_helper": "a build in the command's process validates in a helper process that got ready on the idle core",
    "preload": "a build in the command's process loads its models while the temporary API starts",
    "retry_soon": "the temporary API asks for a quick retry when its database is busy (Prefect's client waits 2 s, 4 s, ...)",
    "no_heartbeats": "flow runs under the temporary API end without waiting for Prefect's heartbeat thread",
    "no_block_registration": "the temporary API answers without first importing every Prefect collection",
    "one_certificate": "the temporary API's clients load one root certificate, not certifi's bundle",
    "gc_thresholds": "the cycle collector runs less often while a process imports what a build imports",
    "freeze_after_setup": "full collections skip what a step's setup loaded",
    "exit_freeze": "a process's final collections skip every live object",
    "trim_after_teardown": "a worker hands freed heap pages back before the extract step loads spaCy",
    "jemalloc": "pyarrow allocates from jemalloc, which returns what a build frees",
    "system_allocator": "publishing allocates Arrow buffers from the system allocator",
    "dask_quiet": "local Dask workers run no profiler and tick less often",
    "dask_no_trim": "local Dask workers keep glibc's adaptive trim threshold (Dask's makes spaCy re-fault its arrays)",
    "openblas": "spaCy's layers multiply on numpy's OpenBLAS with one thread, not blis",
    "hidden_imports": "spaCy and Presidio load without torch and transformers",
    "gx_imports": "Great Expectations loads without SQLAlchemy, scipy.stats and altair",
    "prescan_beside_worker": "with at most one worker, the gate's PII prescans run on the core the worker leaves",
    "training_one_thread": "the acceptance model's small fits use one BLAS thread",
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
