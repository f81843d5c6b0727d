"""The gate's structured PII scan of each extracted shard, ahead of publishing: run on the flow
process while the workers extract (it idles then), so the gate looks up what it would scan
(warehouse/gate/pii.py). Files: <run>/pii-prescan/<shard>.parquet, keyed by text digest."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from pipeline.results import PrescanResult
from pipeline.shards import Shard
from pipeline.steps import Outputs, Step
from privacy.kinds import enabled_kinds
from schemas.config import Recipe
from schemas.expectations import pii_check
from warehouse.layout import RunPaths


def prescan_files(run: RunPaths) -> list[Path]:
    """The finished scans of a run (each has its marker)."""
    return sorted(p for p in run.prescans.glob("*.parquet") if p.with_suffix(".done").exists())


class PrescanStep(Step[Shard, PrescanResult]):
    """Scans the texts the gate checks in a shard's examples; nothing when the recipe publishes
    without the gate or scrubs no PII."""

    name = "prescan"
    result = PrescanResult

    def setup(self, recipe: Recipe) -> None:
        super().setup(recipe)
        self.kinds = enabled_kinds(recipe.privacy) if recipe.gate.enabled else ()
        self.columns = pii_check()["columns"]

    @classmethod
    def folder(cls, unit: Shard) -> Path:
        return unit.run.prescans

    @classmethod
    def marker_name(cls, unit: Shard) -> str:
        return unit.name

    def run(self, unit: Shard, out: Outputs, **params: Any) -> PrescanResult:
        if not self.kinds:
            return PrescanResult(unit.name, 0)
        from warehouse.gate.pii import prescan  # Presidio: loaded here, not when the flow is wired

        table = pq.read_table(unit.examples, columns=self.columns)
        texts = (t for c in self.columns for t in table.column(c).to_pylist() if isinstance(t, str))
        return PrescanResult(unit.name, prescan(texts, out(self.folder(unit) / f"{unit.name}.parquet"), self.kinds))
