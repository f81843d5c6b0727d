"""The gate's structured PII scan of each extracted shard, ahead of publishing: run on the flow
process while the workers extract (it idles then), so the gate looks up what it would scan
(warehouse/gate_pii.py). Files: <run>/pii-prescan/<shard>.parquet, keyed by text digest."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from pipeline.run import load_saved_recipe
from pipeline.shards import Shard
from schemas.expectations import pii_check
from schemas.pii_kinds import enabled_kinds

PRESCAN_DIR = "pii-prescan"


def prescan_files(run_dir: str | Path) -> list[Path]:
    return sorted((Path(run_dir) / PRESCAN_DIR).glob("*.parquet"))


def prescan_shard(shard: dict[str, Any], recipe_path: str, run_dir: str) -> int:
    """Scan the texts the gate checks in a shard's examples; the number of distinct texts scanned
    (0 when the recipe publishes without the gate or scrubs no PII, or the scan exists)."""
    from warehouse.gate_pii import prescan  # Presidio: loaded here, not when the flow is wired

    recipe = load_saved_recipe(recipe_path)
    kinds = enabled_kinds(recipe.filters)
    s = Shard.from_dict(shard)
    out = Path(run_dir) / PRESCAN_DIR / f"{s.name}.parquet"
    if not recipe.gate.enabled or not kinds or out.exists():
        return 0
    columns = pii_check()["columns"]
    table = pq.read_table(s.labels_dir / "examples.parquet", columns=columns)
    out.parent.mkdir(parents=True, exist_ok=True)
    return prescan((t for c in columns for t in table.column(c).to_pylist() if isinstance(t, str)), out, kinds)
