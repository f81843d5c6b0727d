"""Publish an immutable release: split examples by post id, write to a temporary folder, rename.

A release is never overwritten: the rename fails if the version already exists, and anything
that goes wrong before it leaves only a temporary folder behind, which is removed.
"""
from __future__ import annotations

import json
import os
import shutil
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from schemas.config import Recipe
from schemas.lexicon import sha256_file
from schemas.records import EXAMPLES

from warehouse.catalog import register_release
from warehouse.layout import Warehouse
from warehouse.parquet import ParquetSink, iter_rows
from warehouse.splits import SPLITS, split_for


class PublishError(RuntimeError):
    """Nothing was published; the message says why."""


@dataclass(frozen=True)
class Release:
    dataset: str
    version: str
    path: Path

    @property
    def manifest_path(self) -> Path:
        return self.path / "manifest.json"

    def manifest(self) -> dict[str, Any]:
        return json.loads(self.manifest_path.read_text())

    def split_file(self, split: str) -> Path:
        return self.path / "data" / f"{split}-00000-of-00001.parquet"


def split_file_name(split: str) -> str:
    return f"data/{split}-00000-of-00001.parquet"


def publish_release(
    examples_path: Path,
    warehouse: Warehouse,
    recipe: Recipe,
    extra: dict[str, Any],
    version: str | None = None,
) -> Release:
    """Write `<warehouse>/<dataset>/<version>/` with split Parquet files and manifest.json."""
    dataset = recipe.dataset.name
    version = version or warehouse.next_version(dataset)
    final = warehouse.release_dir(dataset, version)
    if final.exists():
        raise PublishError(f"release {dataset}/{version} already exists at {final}; releases are immutable")
    tmp = warehouse.dataset_dir(dataset) / f".tmp-{version}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir(parents=True)
    try:
        sinks = {s: ParquetSink(tmp / split_file_name(s), EXAMPLES) for s in SPLITS}
        for row in iter_rows(examples_path):
            sinks[split_for(row["post_id"], recipe.splits)].write(row)
        for sink in sinks.values():
            sink.close()
        total = sum(s.rows for s in sinks.values())
        if total == 0:
            raise PublishError("no examples to publish: every post was dropped (see the funnel)")
        files = {split_file_name(s): {"rows": sinks[s].rows, "sha256": sha256_file(sinks[s].path)} for s in SPLITS}
        manifest = {
            "dataset": dataset,
            "version": version,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "rows": {s: sinks[s].rows for s in SPLITS},
            "masks": None,
            "files": files,
            "config": recipe.to_dict(),
            **extra,
        }
        manifest["masks"] = _count_masks(sinks)
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n")
        try:
            os.rename(tmp, final)
        except OSError as exc:
            raise PublishError(f"release {dataset}/{version} appeared while publishing; nothing overwritten") from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    release = Release(dataset, version, final)
    register_release(warehouse, release.dataset, release.version, {s: release.split_file(s) for s in SPLITS})
    return release


def _count_masks(sinks: dict[str, ParquetSink]) -> dict[str, int]:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    out = {}
    for split, sink in sinks.items():
        col = pq.read_table(sink.path, columns=["n_masks"]).column("n_masks")
        out[split] = int(pc.sum(col).as_py() or 0)
    return out
