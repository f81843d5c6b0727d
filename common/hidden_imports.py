"""Importing a library with some of its optional dependencies hidden.

Presidio imports torch and transformers when they are installed, thinc (under spaCy) imports
torch, and Great Expectations imports SQLAlchemy, for features this project does not use; with
the `hf` or `embeddings` extra installed, torch alone delays every process that scrubs or tags
by seconds before its first post (bench/README.md, "Process tuning"). Importing such a library inside `hidden(...)` makes its
optional imports fall back as if the package were absent.

Only the thread inside the block is refused: a build imports Great Expectations and Presidio on a
background thread while its main thread keeps running Prefect, which may import any of them for
itself; and the package stays importable afterwards (evaluation's torch backends import it).
"""
from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.machinery import ModuleSpec
from typing import Any


class _Refuse:
    """A meta-path finder that fails the import of `top` packages on one thread only."""

    def __init__(self, top: set[str], thread: int):
        self.top, self.thread = top, thread

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if threading.get_ident() == self.thread and fullname.partition(".")[0] in self.top:
            raise ModuleNotFoundError(f"{fullname} is hidden during this import", name=fullname)
        return None  # every other import: the finders after this one decide


@contextmanager
def hidden(*modules: str) -> Iterator[None]:
    """Within the block, on this thread, `import m` (and its submodules) raises ImportError for
    each of `modules` not imported yet (one already imported cannot be hidden and is left alone)."""
    refuse = _Refuse({m for m in modules if m not in sys.modules}, threading.get_ident())
    sys.meta_path.insert(0, refuse)
    try:
        yield
    finally:
        sys.meta_path.remove(refuse)
