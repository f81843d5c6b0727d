"""The runtime room: everything in express that exists only to make a command faster or leaner.

The code that makes a release right lives in the stage folders and pipeline/; what is here
changes how its libraries load, how its processes collect and allocate memory and how the
temporary Prefect API answers, never what the code computes. Each piece has a name (pieces.py
says what each buys; the figures are in bench/README.md) and `EXPRESS_PLAIN=1` turns them all
off, giving the same release byte for byte.

A command enters the room at two points: `process_start` at its start (the console script), and
one `session()` around the flows it orchestrates. The build flow hands the step runner
`around_setup`, and publishes through `gate_runner`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from flows import prefect_api
from flows.runtime import prefect_tuning
from flows.runtime.collector import collect_less
from flows.runtime.dask_workers import local_worker_config
from flows.runtime.memory import allocator_defaults
from flows.runtime.models import around_setup, import_gx, loading
from flows.runtime.pieces import PIECES, SWITCH, check, enabled

__all__ = ["PIECES", "SWITCH", "around_setup", "check", "enabled", "gate_runner", "local_worker_config",
           "process_start", "session"]


def process_start() -> None:
    """At a command's start, before pyarrow or a model is imported (processes it starts inherit
    the environment). Raises ValueError for a switch naming no piece."""
    check()
    allocator_defaults()
    collect_less()


@contextmanager
def session(temporary_api: bool = True) -> Iterator[Callable[[], None]]:
    """Around the flows of one command that orchestrates them. The API they report to (a temporary
    one unless configured, or none with `temporary_api=False`) starts now, while the command goes
    on with its own work; the function yielded waits for it and tunes it: call it before the first
    flow (again costs nothing)."""
    app = prefect_tuning.server_app()
    if temporary_api:
        prefect_api.start(app)
    with ExitStack() as tuning:
        waited: list[bool] = []

        def wait_for_api() -> None:
            if waited:
                return
            if temporary_api:
                prefect_api.ensure(app)
            tuning.enter_context(prefect_tuning.without_heartbeats())
            waited.append(True)

        yield wait_for_api


def gate_runner() -> Callable[..., Any]:
    """The quality gate as publishing calls it (warehouse.gate.suite.run_gate), its libraries loaded as
    the runtime says."""
    return _validate


def _validate(*args: Any, **kwargs: Any) -> Any:
    with loading():
        import_gx()
        from warehouse.gate.suite import run_gate

        return run_gate(*args, **kwargs)
