"""Join finished shards into the run's tables (in shard order) and publish the run exactly once."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from extractors.segmentation import Segmenter
from filters.reddit import filter_data_versions
from flows import stages
from flows.shards import Shard, commit, read_marker, tmp_name, write_marker
from schemas.funnel import Funnel
from schemas.lexicon import data_versions
from schemas.records import DISCLOSURES, EXAMPLES, QUARANTINE
from schemas.versioning import code_version
from schemas.vocabulary import vocabulary_version
from warehouse.layout import Warehouse
from warehouse.publish import Release, ensure_registered, publish_release


def concat_parquet(parts: list[Path], out: Path, schema: Any) -> int:
    """Append the record batches of `parts` into `out` (atomically); returns the row count."""
    rows = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    with pq.ParquetWriter(tmp_name(out), schema, compression="zstd") as writer:
        for part in parts:
            for batch in pq.ParquetFile(part).iter_batches(batch_size=2048):
                writer.write_batch(batch)
                rows += batch.num_rows
    commit([out])
    return rows


def _sum_funnels(funnels: list[dict[str, Any]]) -> Funnel:
    total = Funnel()
    for d in funnels:
        f = Funnel.from_dict(d)
        total.read += f.read
        total.kept += f.kept
        total.malformed += f.malformed
        total.dropped.update(f.dropped)
    return total


def assemble(shard_list: list[dict[str, Any]], inputs: list[dict[str, Any]], run_dir: str,
             quarantine_dir: str) -> dict[str, Any]:
    """Run-level ingest and extract results (funnels, file paths) from the finished shards;
    `inputs` are the manifest's input entries (path, sha256)."""
    run, quarantine = Path(run_dir), Path(quarantine_dir)
    done = read_marker(run, "assemble")
    if done is not None:
        return done
    shards = [Shard.from_dict(s) for s in shard_list]
    filtered = [read_marker(s.path, "filter") for s in shards]
    deduped = [read_marker(s.path, "dedupe") for s in shards]
    extracted = [read_marker(s.labels_dir, "extract") for s in shards]
    missing = [s.name for s, *marks in zip(shards, filtered, deduped, extracted) if None in marks]
    if missing:
        raise RuntimeError(f"{run}: shards not finished: {', '.join(missing[:5])}")
    ingest = _sum_funnels([m["funnel"] for m in filtered])
    dedupe = _sum_funnels([m["funnel"] for m in deduped])
    ingest.kept = dedupe.kept
    ingest.dropped.update(dedupe.dropped)
    ingest.check("ingest (all shards)")
    extract = _sum_funnels([m["funnel"] for m in extracted])
    extract.check("extract (all shards)")
    if extract.read != ingest.kept:
        raise RuntimeError(f"{run}: extract read {extract.read} posts but ingest kept {ingest.kept}")
    concat_parquet([s.labels_dir / "examples.parquet" for s in shards], run / "examples.parquet", EXAMPLES)
    concat_parquet([s.labels_dir / "disclosures.parquet" for s in shards], run / "disclosures.parquet",
                   DISCLOSURES)
    concat_parquet([p for s in shards for p in (s.path / "quarantine-ingest.parquet",
                                                s.path / "quarantine-dedupe.parquet")],
                   quarantine / "ingest.parquet", QUARANTINE)
    concat_parquet([s.labels_dir / "quarantine-extract.parquet" for s in shards], quarantine / "extract.parquet",
                   QUARANTINE)
    for name, f in (("ingest", ingest), ("extract", extract)):
        (run / f"{name}_funnel.json").write_text(json.dumps(f.to_dict(), indent=2) + "\n")
    result = {
        "ingest": {"raw_posts": [str(s.path / "posts.parquet") for s in shards],
                   "quarantine": str(quarantine / "ingest.parquet"), "funnel": ingest.to_dict(),
                   "inputs": inputs, "comments_joined": sum(m.get("comments_joined", 0) for m in filtered)},
        "extract": {"examples": str(run / "examples.parquet"), "disclosures": str(run / "disclosures.parquet"),
                    "funnel": extract.to_dict()},
        "shards": len(shards),
        "shard_list": shard_list,
    }
    write_marker(run, "assemble", result)
    return result


def find_published(warehouse: str, run_id: str) -> dict[str, str] | None:
    """The release a run already published (a rerun after a kill must not publish twice)."""
    wh = Warehouse.at(warehouse)
    for manifest in sorted(wh.root.glob("*/v*/manifest.json")):
        try:
            m = json.loads(manifest.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if m.get("run_id") == run_id:
            return {"dataset": m["dataset"], "version": m["version"], "path": str(manifest.parent),
                    "manifest": str(manifest)}
    return None


def publish_run(warehouse: str, run_id: str, run_dir: str, recipe_path: str, assembled: dict[str, Any],
                extra: dict[str, Any] | None = None) -> dict[str, str]:
    """Publish the assembled run unless a release of this run already exists; `extra` adds
    manifest fields (e.g. the parent release of an incremental rebuild)."""
    existing = find_published(warehouse, run_id)
    if existing is not None:  # a kill may have landed before the catalog registration: ensure the views
        ensure_registered(Warehouse.at(warehouse), Release.at(Path(existing["path"])))
        return {**existing, "already_published": "true"}
    ingest, extract = assembled["ingest"], assembled["extract"]
    recipe = stages.load_saved_recipe(recipe_path)
    versions = data_versions()
    fields = {
        "funnel": stages.total_funnel(ingest, extract),
        "stages": {"ingest": ingest["funnel"], "extract": extract["funnel"]},
        "inputs": ingest["inputs"],
        "run_id": run_id,
        "code_version": code_version(),
        "lexicon_version": versions["lexicon"]["version"],
        "decomposition_version": versions["decomposition"]["version"],
        "filter_data_versions": filter_data_versions(recipe.filters),
        "vocabulary_version": vocabulary_version(),
        "segmentation": Segmenter(recipe.segment).describe(),
        "shards": assembled["shards"],
        **(extra or {}),
    }
    release = publish_release(Path(extract["examples"]), Warehouse.at(warehouse), recipe, fields)
    out = {"dataset": release.dataset, "version": release.version, "path": str(release.path),
           "manifest": str(release.manifest_path)}
    write_marker(Path(run_dir), "publish", out)
    return out
