"""Importing a library with some of its optional dependencies hidden.

Presidio imports torch and transformers when they are installed, and thinc (under spaCy) imports
torch, for features this project does not use; with the `hf` or `embeddings` extra installed that
costs every process that scrubs or tags 1-20 s before its first post (bench/README.md). Importing
such a library inside `hidden(...)` makes its optional imports fall back as if the package were
absent; the package stays importable afterwards (evaluation's torch backends import it as usual).
"""
from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def hidden(*modules: str) -> Iterator[None]:
    """Within the block, `import m` raises ImportError for each of `modules` not imported yet
    (one already imported cannot be hidden and is left alone)."""
    hide = [m for m in modules if m not in sys.modules]
    for m in hide:
        sys.modules[m] = None  # type: ignore[assignment]  # a None entry makes `import m` raise ImportError
    try:
        yield
    finally:
        for m in hide:
            if sys.modules.get(m, 0) is None:
                del sys.modules[m]
