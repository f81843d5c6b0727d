"""How a build's libraries and models load (pieces `openblas`, `hidden_imports`, `gx_imports`),
and what the runtime does around a step's setup.

spaCy's layers multiply their matrices with numpy's OpenBLAS instead of thinc's default blis,
with one BLAS thread per process (a build runs one worker process per core): the same tags and
entities (tests/flows/runtime/test_models.py). thinc imports torch and Presidio imports torch and
transformers whenever they are installed, for models this project does not use; Great
Expectations imports SQLAlchemy, scipy.stats and altair for features the gate does not use.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from flows.runtime.imports import deferred, hidden
from flows.runtime.pieces import enabled

BLAS_THREADS = 1


@contextmanager
def loading() -> Iterator[None]:
    """Around code that loads spaCy or Presidio for a build: a step's setup, the gate."""
    with ExitStack() as stack:
        if enabled("hidden_imports"):
            stack.enter_context(hidden("torch", "transformers"))
        if enabled("openblas"):
            from thinc.api import use_ops
            from threadpoolctl import threadpool_limits

            threadpool_limits(limits=BLAS_THREADS, user_api="blas")  # for the whole process, from now on
            stack.enter_context(use_ops("numpy", use_blis=False))  # the layers a load builds keep these ops
        yield


@contextmanager
def around_setup(step: Any) -> Iterator[None]:
    """What the step runner's setup of `step` runs inside (pipeline/steps.py: `around_setup`):
    the models load as `loading` says."""
    with loading():
        yield


def import_gx() -> Any:
    """Great Expectations, as `gx_imports` says (the gate validates pandas frames only): the gate's
    own import (warehouse/gate/gx.py), with what it never uses left out when the piece is on."""
    from warehouse.gate.gx import import_gx as plain

    if not enabled("gx_imports"):
        return plain()
    with hidden("sqlalchemy"), deferred("scipy.stats", "altair"):
        return plain()
