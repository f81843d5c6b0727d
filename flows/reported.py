"""Commands that are not orchestrated (evaluate, score, report, card, export, ...) run as plain
Python, and as a Prefect flow when a Prefect API is configured: a user who runs a Prefect server
sees every run there, and one who does not waits for no server and imports no Prefect
(docs/runtime.md says which commands are which, and why).
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from flows import prefect_api

F = TypeVar("F", bound=Callable[..., Any])


def reported(name: str) -> Callable[[F], F]:
    """Decorate the one function a command runs: called as it is, or as the flow `name` (its
    arguments the flow run's parameters) when an API is configured."""
    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            if not prefect_api.configured():
                return fn(*args, **kwargs)
            from prefect import flow

            return flow(fn, name=name, validate_parameters=False)(*args, **kwargs)

        return run  # type: ignore[return-value]

    return decorate
