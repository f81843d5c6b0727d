"""The extract step, one shard at a time and in parallel: disclosures in a shard's kept posts,
masked into examples (with segmentation and the vocabulary collapse). One spaCy model per worker
process, loaded by its first shard and reused by the others."""
from __future__ import annotations

import gc
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from extractors.disclosures import DisclosureExtractor
from extractors.examples import build_examples
from extractors.segmentation import Segmenter
from extractors.vocabulary import Collapser
from pipeline.dedupe_shards import kept_posts
from pipeline.results import ExtractResult
from pipeline.review import Review, reviewer, run_review
from pipeline.run import load_saved_recipe
from pipeline.shards import Shard, commit, read_marker, seconds_since, tmp_name, write_marker
from pipeline.worker_memory import hand_back_memory
from schemas.config import ExtractConfig, Recipe
from schemas.funnel import Funnel
from schemas.records import DISCLOSURES, EXAMPLES, QUARANTINE, RawPost, quarantine_values
from warehouse.parquet import ParquetSink

_EXTRACTORS: dict[tuple[int, str, str], DisclosureExtractor] = {}


def _extractor(cfg: ExtractConfig) -> DisclosureExtractor:
    """One extractor (spaCy model) per worker process and setting, reused by every shard it runs."""
    key = (cfg.batch_size, cfg.forms, cfg.acceptance)
    if key not in _EXTRACTORS:
        hand_back_memory()  # what filtering and dedupe left behind, before the model comes in
        _EXTRACTORS[key] = DisclosureExtractor(batch_size=cfg.batch_size, forms=cfg.forms, acceptance=cfg.acceptance)
        freeze_long_lived()
    return _EXTRACTORS[key]


def freeze_long_lived() -> None:
    """Exempt what lives as long as the process (the spaCy model: ~160k objects) from garbage
    collection; each full collection during extraction otherwise re-scans it (~7 % of the pass)."""
    gc.collect()
    gc.freeze()


def write_extraction(posts: Iterable[RawPost], extractor: DisclosureExtractor, recipe: Recipe, funnel: Funnel,
                     examples_path: Path, disclosures_path: Path, quarantine_path: Path,
                     review: Review | None = None, hits: Counter[str] | None = None) -> Collapser:
    """Stream posts through extraction into examples, disclosures and quarantine Parquet files.
    Returns the unmapped-word counts."""
    collapser = Collapser()
    with ParquetSink(examples_path, EXAMPLES) as examples, \
         ParquetSink(disclosures_path, DISCLOSURES) as disclosures, \
         ParquetSink(quarantine_path, QUARANTINE) as dropped:
        def on_found(post: RawPost, found: list) -> None:
            if found:
                disclosures.write({"post_id": post.id, "disclosures": [d.to_json() for d in found]})

        for ex in build_examples(posts, extractor, recipe.extract, funnel,
                                 on_drop=lambda p, why: dropped.write_values(quarantine_values("extract", p, why, False)),
                                 on_disclosures=on_found, segmenter=Segmenter(recipe.segment), hit_counts=hits,
                                 review=review):
            collapser.observe(ex.surfaces)
            examples.write(ex.to_row())
    return collapser


def extract_shard(shard: dict[str, Any], recipe_path: str) -> ExtractResult:
    """Find disclosures in a shard's kept posts and write its examples; drops are quarantined.
    A shard with a `work` folder (a rebuild re-deriving labels) writes there."""
    s = Shard.from_dict(shard)
    done = read_marker(s.labels_dir, "extract")
    if done is not None:
        return ExtractResult.from_marker(done)
    started = time.perf_counter()
    recipe = load_saved_recipe(recipe_path)
    extractor = _extractor(recipe.extract)
    review = reviewer(run_review(Path(recipe_path).parent))
    funnel, hits = Funnel(), Counter()
    s.labels_dir.mkdir(parents=True, exist_ok=True)
    out = {name: s.labels_dir / f"{name}.parquet" for name in ("examples", "disclosures", "quarantine-extract")}
    collapser = write_extraction(kept_posts(s), extractor, recipe, funnel, tmp_name(out["examples"]),
                                 tmp_name(out["disclosures"]), tmp_name(out["quarantine-extract"]), review, hits)
    funnel.check(f"extract {s.name}")
    commit(list(out.values()))
    result = ExtractResult(s.name, funnel, seconds_since(started), False, collapser.summary(), dict(hits))
    write_marker(s.labels_dir, "extract", result.to_marker())
    return result
