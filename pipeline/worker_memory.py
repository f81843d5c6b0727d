"""Memory a worker gives back when the filter step is torn down (pipeline/steps.py).

A worker filters shards, then (one of them) dedupes, then extracts with a spaCy model. What the
earlier steps loaded or freed stays in its RSS while it extracts unless handed back: the language
model of the filters (reloaded if the worker filters again), and heap pages glibc keeps after
large frees (local workers run without Dask's MALLOC_TRIM_THRESHOLD_: flows/process.py).
"""
from __future__ import annotations

import ctypes
import gc


def hand_back_memory() -> None:
    """Drop the filters' language model and return free heap pages to the OS."""
    from filters.language import identifier

    identifier.cache_clear()
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to trim
        pass
