"""The one place a release's manifest.json is composed: the release's own facts (rows, files,
gate, vocabulary) and the facts of the run that built it (funnels, inputs, data versions)."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from common.versioning import code_version
from schemas.config import Recipe
from schemas.funnel import Funnel
from schemas.lexicon import data_versions
from schemas.vocabulary import vocabulary_version
from warehouse.releases.integrity import manifest_sum_line
from warehouse.layout import ReleasePaths


def total_funnel(ingest: Funnel, extract: Funnel) -> Funnel:
    """The build's funnel: ingest's read, extraction's kept, every drop and malformed record of both."""
    total = Funnel(read=ingest.read, kept=extract.kept, malformed=ingest.malformed + extract.malformed)
    total.dropped.update(ingest.dropped)
    total.dropped.update(extract.dropped)
    total.check("build")
    return total


def run_fields(run_id: str, ingest: Funnel, extract: Funnel, inputs: list[dict[str, Any]], shards: int,
               stages: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a release records of the run that built it; `stages`: what the stages say of their
    own data and models (the build gathers it, pipeline/publish.py); `extra` adds fields (a
    rebuild's parent)."""
    versions = data_versions()
    return {
        "funnel": total_funnel(ingest, extract).to_dict(),
        "stages": {"ingest": ingest.to_dict(), "extract": extract.to_dict()},
        "inputs": inputs,
        "run_id": run_id,
        "lexicon_version": versions["lexicon"]["version"],
        "decomposition_version": versions["decomposition"]["version"],
        "vocabulary_version": vocabulary_version(),
        **stages,
        "shards": shards,
        **(extra or {}),
    }


def release_fields(recipe: Recipe, version: str, parent: str | None, files: dict[str, dict[str, Any]],
                   masks: dict[str, int], vocabulary: dict[str, Any], gate: dict[str, Any] | None) -> dict[str, Any]:
    """What a release records of itself; `files`: each split file's split, rows, bytes and sha256."""
    return {
        "dataset": recipe.dataset.name,
        "version": version,
        "parent_version": parent,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "rows": {f["split"]: f["rows"] for f in files.values()},
        "masks": masks,
        "files": files,
        "split_mode": "test_only" if recipe.splits.test_only else "hash",
        "config": recipe.to_dict(),
        "code_version": code_version(),
        "vocabulary": vocabulary,
        "gate": gate,
    }


def write_manifest(release_dir: Path, release: dict[str, Any], run: dict[str, Any]) -> Path:
    """Write manifest.json, and its sha256 beside it for every reader to check, into a release
    folder that is not yet published (it is renamed after)."""
    paths = ReleasePaths(release_dir)
    data = (json.dumps({**release, **run}, indent=2, default=str) + "\n").encode()
    paths.manifest.write_bytes(data)
    paths.manifest_sum.write_text(manifest_sum_line(data))
    return paths.manifest
