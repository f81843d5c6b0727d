"""Where a build's memory comes from and goes back to (pieces `jemalloc`, `system_allocator`,
`trim_after_teardown`)."""
from __future__ import annotations

import ctypes
import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager

from flows.runtime.pieces import enabled


def allocator_defaults() -> None:
    """Before pyarrow is imported (inherited by the processes a command starts): pyarrow's default
    pool, mimalloc, keeps what a build's Parquet reads and writes freed; jemalloc returns it."""
    if enabled("jemalloc"):
        os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")


@contextmanager
def publishing() -> Iterator[None]:
    """Arrow allocates from the system allocator inside: publishing reads and drops chunk after
    chunk, which a pool keeps. Buffers remember their pool, so switching back is safe."""
    if not enabled("system_allocator"):
        yield
        return
    import pyarrow as pa

    previous = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(previous)


def trim() -> None:
    """Collect, then return free heap pages to the OS (glibc's malloc_trim): after a step's
    teardown, before the next step loads its model."""
    if not enabled("trim_after_teardown"):
        return
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to trim
        pass
