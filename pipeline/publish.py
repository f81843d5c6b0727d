"""The publish step: an assembled run becomes a release exactly once (a rerun after a kill finds
the release its run already published)."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.pii_prescan import prescan_files
from pipeline.results import AssembleResult, Published
from pipeline.run import load_saved_recipe
from review.build import run_review
from schemas.config import Recipe
from warehouse.releases.integrity import ReleaseChanged, read_manifest
from warehouse.layout import RunPaths, Warehouse
from warehouse.releases.manifest import run_fields
from warehouse.releases.publish import Checks, PublishError, ensure_registered, publish_release
from warehouse.releases.release import Release
from warehouse.ledgers.takedowns import TakedownLedger


def find_published(wh: Warehouse, run_id: str) -> Published | None:
    """The release a run already published."""
    for release in wh.releases():
        try:
            m = read_manifest(release.root)
        except ReleaseChanged:
            continue  # a damaged release is said by the commands that read it
        if m.get("run_id") == run_id:
            return Published(m["dataset"], m["version"], str(release.root), str(release.manifest), True)
    return None


def stage_fields(recipe: Recipe) -> dict[str, Any]:
    """What the manifest records of the stages' own data and models under this recipe (imported
    here: the process that wires a build does not load them)."""
    from extractors.acceptance import describe as acceptance_model
    from extractors.patterns import default_intensifiers
    from extractors.segmentation import Segmenter
    from filters.reddit import filter_data_versions
    from sources.reddit_text import default_table

    return {"filter_data_versions": filter_data_versions(recipe.filters),
            "reddit_text_version": default_table().version,
            "intensifiers_version": default_intensifiers().version,
            "acceptance": acceptance_model(recipe.extract),
            "segmentation": Segmenter(recipe.segment).describe()}


def publish_run(wh: Warehouse, run: RunPaths, assembled: AssembleResult, extra: dict[str, Any] | None = None,
                gate: Callable[..., Any] | None = None) -> Published:
    """Publish the assembled run unless a release of this run already exists; `extra` adds
    manifest fields (e.g. the parent release of an incremental rebuild); `gate` runs the quality
    gate (warehouse/releases/publish.py)."""
    run_id = run.root.name
    existing = find_published(wh, run_id)
    if existing is not None:  # a kill may have landed before the catalog registration: ensure the views
        ensure_registered(wh, Release.at(Path(existing.path)))
        return existing
    ingest = assembled.ingest
    if ingest.read and ingest.malformed == ingest.read:  # not "every post was dropped": none was a post
        raise PublishError(f"no examples to publish: {ingest.read:,} line(s) read, none of them a Reddit post as JSON "
                           f"(is the input a dump of one post a line?); each line's reason is in the quarantine, "
                           f"{wh.quarantine(run_id, 'ingest')}")
    recipe = load_saved_recipe(run.recipe)
    index = run_review(run)
    review = {"review": index.describe()} if index is not None else {}
    honoured = {}
    if run.takedowns.exists():  # the takedowns its filters dropped at read (docs/takedowns.md)
        state = json.loads(run.takedowns.read_text())
        honoured = {"takedowns": {"ledger_version": state["version"], "ledger_sha256": state["sha256"]}}
    fields = run_fields(run_id, assembled.ingest, assembled.extract, assembled.inputs, assembled.shards,
                        stage_fields(recipe), {**review, **honoured, **(extra or {})})
    checks = Checks(prescan_files(run), gate, TakedownLedger(wh.root).current().posts)
    release = publish_release(Path(assembled.examples), wh, recipe, fields, checks=checks)
    return Published(release.dataset, release.version, str(release.path), str(release.manifest_path))
