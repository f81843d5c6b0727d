"""The runtime room: everything in express that exists only to make a command faster or leaner.

The code that makes a release right lives in the stage folders and pipeline/; what is here
changes when and where that code runs, how its libraries load and how its processes manage
memory, never what it computes. Each piece has a name (pieces.py says what each buys; the
figures are in bench/README.md) and `EXPRESS_PLAIN=1` turns them all off, giving the same
release byte for byte.

A command enters the room at two points: `process_start`/`process_exit` around the whole
command (the console script), and one `session(plan)` around the flows it runs. The build flow
hands the step runner `around_setup`, and publishes through `gate_runner`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from flows import prefect_api
from flows.runtime import gate_helper, prefect_tuning
from flows.runtime.collector import collect_less, exit_quickly
from flows.runtime.dask_workers import local_worker_config
from flows.runtime.memory import allocator_defaults, publishing
from flows.runtime.models import around_setup, loading, training
from flows.runtime.pieces import PIECES, SWITCH, check, enabled

__all__ = ["PIECES", "SWITCH", "around_setup", "check", "enabled", "gate_runner", "local_worker_config",
           "prescans_beside_worker", "process_exit", "process_start", "publishing", "session", "training"]


def process_start() -> None:
    """At a command's start, before pyarrow or a model is imported (processes it starts inherit
    the environment). Raises ValueError for a switch naming no piece."""
    check()
    allocator_defaults()
    collect_less()


def process_exit() -> None:
    """Just before the command's process exits."""
    exit_quickly()


def _wants_helper(plan: Any) -> bool:
    """A build in this process that publishes through the gate (plan: pipeline.plan.BuildPlan). A
    build on a cluster validates here once its workers are gone: a helper would hold its memory
    beside the workers at their peak and take CPU they need."""
    return (plan is not None and enabled("gate_helper") and plan.in_process and plan.publish
            and plan.recipe.gate.enabled)


def _preload(plan: Any) -> Callable[[], None] | None:
    """For a build in this process: set its filter and extract steps up once while the API starts,
    so the models are in the process's caches when the steps set up for real."""
    if plan is None or not (enabled("preload") and plan.in_process):
        return None

    def load() -> None:
        from pipeline.extract_shards import ExtractStep
        from pipeline.filter_shards import FilterStep

        with loading():
            for step in (FilterStep, ExtractStep):
                step().setup(plan.recipe)

    return load


@contextmanager
def session(plan: Any = None, temporary_api: bool = True) -> Iterator[None]:
    """Around the flows of one command: the Prefect API they report to (a temporary one unless
    configured, or none with `temporary_api=False`), and for a build (`plan`) the gate's helper
    and the models' preload."""
    with ExitStack() as stack:
        if _wants_helper(plan):
            from privacy.kinds import enabled_kinds

            gate_helper.start(enabled_kinds(plan.recipe.filters))
            stack.callback(gate_helper.stop)
        if temporary_api:
            prefect_api.ensure(prefect_tuning.server_app(), prefect_tuning.server_env(), prefect_tuning.client_env(),
                               while_starting=_preload(plan))
        stack.enter_context(prefect_tuning.without_heartbeats())
        yield


def gate_runner() -> Callable[..., Any]:
    """The quality gate as publishing calls it: in the gate's helper when the session started one,
    else in this process, with its libraries loaded as the runtime says."""
    return gate_helper.run_gate


def prescans_beside_worker(dask_address: str | None, workers: int) -> bool:
    """Do the gate's PII prescans run on a thread of the flow process, on the core that at most one
    worker leaves it (else as tasks beside the extracts)?"""
    return enabled("prescan_beside_worker") and not dask_address and workers <= 1
