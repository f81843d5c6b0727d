"""Builds as the CLI runs them, for tests: a checked plan (pipeline/plan.py), then the real Prefect
flow; the result in its JSON form."""
from __future__ import annotations

from typing import Any


def build(inputs: list[str], warehouse: str, config: str | None = None, shard_lines: int | None = None,
          **plan: Any) -> dict[str, Any]:
    from flows.build import build_flow
    from pipeline.plan import BuildRequest, plan_build

    return build_flow(plan_build(BuildRequest(warehouse, inputs, config, shard_lines, **plan))).to_dict()


def rebuild(inputs: list[str], warehouse: str, config: str | None = None, shard_lines: int | None = None,
            **plan: Any) -> dict[str, Any]:
    from flows.rebuild import rebuild_flow
    from pipeline.plan import BuildRequest, plan_build

    return rebuild_flow(plan_build(BuildRequest(warehouse, inputs, config, shard_lines, **plan))).to_dict()
