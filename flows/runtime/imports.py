"""Importing a library with some of its optional dependencies hidden (pieces `hidden_imports`,
`gx_imports`).

Presidio imports torch and transformers when they are installed, thinc (under spaCy) imports
torch, and Great Expectations imports SQLAlchemy, for features this project does not use.
Importing such a library inside `hidden(...)` makes its optional imports fall back as if the
package were absent.

Some of those imports cannot be refused, because the library needs the name to exist (Great
Expectations imports scipy.stats and altair at the top of an expectation we never use): inside
`deferred(...)` such a module is created without running its code, which runs on first use, if
ever (importlib's LazyLoader).

Only the thread inside the block is refused (or deferred): a build loads its models on a task's
thread while another runs Prefect, which may import any of them for itself; and the package stays
importable afterwards (evaluation's torch backends import it). Both use only importlib's public
finder protocol and LazyLoader.
"""
from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from importlib.util import LazyLoader
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
def _first_finder(finder: Any) -> Iterator[None]:
    """`finder` asked before every other import finder, within the block."""
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


@contextmanager
def hidden(*modules: str) -> Iterator[None]:
    """Within the block, on this thread, `import m` (and its submodules) raises ImportError for
    each of `modules` not imported yet (one already imported cannot be hidden and is left alone)."""
    with _first_finder(_Refuse({m for m in modules if m not in sys.modules}, threading.get_ident())):
        yield


class _Defer(MetaPathFinder):
    """A meta-path finder that, on one thread, hands out the named modules with a lazy loader."""

    def __init__(self, names: set[str], thread: int):
        self.names, self.thread = names, thread

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if threading.get_ident() != self.thread or fullname not in self.names:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = LazyLoader(spec.loader)
                return spec
        return None  # not installed: the import fails as it would have


@contextmanager
def deferred(*modules: str) -> Iterator[None]:
    """Within the block, on this thread, importing one of `modules` (full dotted names, each not
    imported yet) binds the module without running it; its code runs on first attribute access."""
    with _first_finder(_Defer({m for m in modules if m not in sys.modules}, threading.get_ident())):
        yield
