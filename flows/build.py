"""Prefect flow that wires the build stages: ingest -> extract -> publish. It only wires."""
from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows import stages
from schemas.config import load_recipe, override
from warehouse.layout import Warehouse

scrape_task = task(stages.scrape, name="scrape-praw", cache_policy=NO_CACHE)
ingest_task = task(stages.ingest, name="ingest", cache_policy=NO_CACHE)
extract_task = task(stages.extract, name="extract", cache_policy=NO_CACHE)
publish_task = task(stages.publish, name="publish", cache_policy=NO_CACHE)


def new_run_id() -> str:
    return f"{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"


@flow(name="express-build")
def build_flow(inputs: list[str], warehouse: str, config: str | None = None,
               praw_terms: list[str] | None = None) -> dict[str, Any]:
    """Read dump files (and/or scrape praw), filter, extract disclosures and publish a release."""
    wh = Warehouse.at(warehouse)
    run_id = new_run_id()
    run_dir, quarantine = wh.run_dir(run_id), wh.quarantine_dir(run_id)
    recipe = load_recipe(config)
    if praw_terms:
        recipe = override(recipe, "sources", kind="praw", listing="search", terms=tuple(praw_terms))
    recipe_path = str(stages.save_recipe(recipe, run_dir / "recipe.json"))
    inputs = list(inputs)
    if recipe.sources.kind == "praw":
        scraped = scrape_task(str(wh.root / "inputs" / "praw"), recipe_path)
        print(f"[scrape]  {scraped['path'] or 'nothing new'}; reading {len(scraped['files'])} pull file(s)")
        inputs.extend(scraped["files"])
    if not inputs:
        raise ValueError("no inputs: give --input files or a recipe with [sources] kind = \"praw\"")
    ingested = ingest_task(inputs, str(run_dir), str(quarantine), recipe_path)
    print(f"[ingest]  {ingested['funnel']}")
    extracted = extract_task(ingested["raw_posts"], str(run_dir), str(quarantine), recipe_path)
    print(f"[extract] {extracted['funnel']}")
    release = publish_task(extracted["examples"], str(wh.root), recipe_path, run_id, ingested, extracted)
    print(f"[publish] {release['dataset']}/{release['version']} -> {release['path']}")
    return {"run_id": run_id, "release": release, "ingest": ingested, "extract": extracted}
