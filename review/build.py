"""Hand-review decisions in a build: which ledger version a run uses (fixed when the run starts,
part of its id, recorded in its manifest), and the per-post step that applies it to the masks
extraction found (review/apply.py holds the matching rule)."""
from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from common.files import write_json
from review.apply import ReviewIndex, apply_decisions
from review.ledger import Ledger
from schemas.records import Disclosure, RawPost
from warehouse.layout import RunPaths, Warehouse

Review = Callable[[RawPost, list[Disclosure]], tuple[list[Disclosure], "str | None"]]


def review_state(wh: Warehouse, dataset: str) -> dict[str, Any] | None:
    """The dataset's ledger as it stands (version, sha256), or None when nothing was reviewed."""
    ledger = Ledger(wh.root, dataset)
    version = ledger.version
    if version == 0:
        return None
    return {"dataset": dataset, "version": version, "sha256": ledger.sha256(version)}


def save_review_state(run: RunPaths, state: dict[str, Any] | None) -> None:
    """Fix the ledger version a run applies (its `review.json`), when anything was reviewed."""
    if state is not None:
        write_json(run.review, state)


@lru_cache(maxsize=4)
def _index(root: str, dataset: str, version: int) -> ReviewIndex:
    return ReviewIndex.from_ledger(Ledger(root, dataset), version)


def run_review(run: RunPaths) -> ReviewIndex | None:
    """The review index a run applies (loaded once per worker process), or None."""
    if not run.review.exists():
        return None
    state = json.loads(run.review.read_text())
    root = Warehouse.of_run(run.root).root  # found from the run, so a moved warehouse still resumes
    return _index(str(root), state["dataset"], int(state["version"]))


def reviewer(index: ReviewIndex | None) -> Review | None:
    """The per-post step for build_examples: the masks review keeps, and `review_rejected` when it
    took every one of them."""
    if index is None or not index.by_post:
        return None

    def review(post: RawPost, masks: list[Disclosure]) -> tuple[list[Disclosure], str | None]:
        applied = apply_decisions(post.id, post.text, masks, index)
        return applied.kept, applied.reason

    return review
