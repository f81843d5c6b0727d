"""The extract step, one shard at a time and in parallel: disclosures in a shard's kept posts,
masked into examples (with segmentation, the vocabulary collapse and hand-review decisions). One
spaCy model per worker process, loaded by its first shard and reused by the others."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from common.parquet import ParquetSink
from extractors.disclosures import DisclosureExtractor
from extractors.examples import CARRIED, Hooks, build_examples
from extractors.segmentation import Segmenter
from extractors.vocabulary import Collapser
from pipeline.dedupe_shards import kept_posts
from pipeline.results import ExtractResult
from pipeline.shards import Shard
from pipeline.steps import Outputs, Step
from review.build import Review, reviewer, run_review
from schemas.config import Recipe
from schemas.funnel import Funnel
from schemas.records import DISCLOSURES, EXAMPLES, QUARANTINE, TAKEDOWN, RawPost, quarantine_values

# What extraction reads of a kept post, by name: its id, text and origin (for quarantine rows),
# and every field an example carries from its post (extractors/examples.py).
POST_COLUMNS = tuple(dict.fromkeys(("id", "text", "source_file", "source_line", *CARRIED)))
assert set(POST_COLUMNS) <= {f.name for f in fields(RawPost)}


def _past_tombstones(posts: Iterable[RawPost], funnel: Funnel, dropped: ParquetSink) -> Iterator[RawPost]:
    """The posts, less those a takedown emptied in place (takedowns/shards.py: no id, no
    text; the row stays so that dedupe's row numbers hold), each counted as dropped for takedown."""
    for post in posts:
        if post.id:
            yield post
        else:
            funnel.read += 1
            funnel.drop(TAKEDOWN)
            dropped.write_values(quarantine_values("extract", post, TAKEDOWN))


@dataclass(frozen=True)
class ExtractionFiles:
    """Where one extraction writes: its examples, disclosures and quarantine Parquet files."""

    examples: Path
    disclosures: Path
    quarantine: Path


def write_extraction(posts: Iterable[RawPost], extractor: DisclosureExtractor, recipe: Recipe, funnel: Funnel,
                     files: ExtractionFiles, review: Review | None = None,
                     hits: Counter[str] | None = None) -> Collapser:
    """Stream posts through extraction into examples, disclosures and quarantine Parquet files.
    Returns the unmapped-word counts."""
    collapser = Collapser()
    with ParquetSink(files.examples, EXAMPLES) as examples, \
         ParquetSink(files.disclosures, DISCLOSURES) as disclosures, \
         ParquetSink(files.quarantine, QUARANTINE) as dropped:
        def on_found(post: RawPost, found: list) -> None:
            if found:
                disclosures.write({"post_id": post.id, "disclosures": [d.to_json() for d in found]})

        hooks = Hooks(on_drop=lambda p, why: dropped.write_values(quarantine_values("extract", p, why, False)),
                      on_disclosures=on_found, hit_counts=hits, review=review)
        for ex in build_examples(_past_tombstones(posts, funnel, dropped), extractor, recipe.extract, funnel,
                                 Segmenter(recipe.segment), hooks):
            collapser.observe(ex.surfaces)
            examples.write(ex.to_row())
    return collapser


class ExtractStep(Step[Shard, ExtractResult]):
    """Finds disclosures in a shard's kept posts and writes its examples; drops are quarantined.
    A shard with a `work` folder (a rebuild re-deriving labels) writes there."""

    name = "extract"
    result = ExtractResult
    replaces = ("filter",)  # what filtering and dedupe left behind, before the model comes in

    def setup(self, recipe: Recipe) -> None:
        super().setup(recipe)
        cfg = recipe.extract
        self.extractor = DisclosureExtractor(batch_size=cfg.batch_size, forms=cfg.forms, acceptance=cfg.acceptance,
                                             quote_lines=cfg.quote_lines)

    @classmethod
    def folder(cls, unit: Shard) -> Path:
        return unit.labels_dir

    def run(self, unit: Shard, out: Outputs, **params: Any) -> ExtractResult:
        review = reviewer(run_review(unit.run))
        funnel, hits = Funnel(), Counter()
        files = ExtractionFiles(out(unit.examples), out(unit.disclosures), out(unit.quarantine("extract")))
        collapser = write_extraction(kept_posts(unit, POST_COLUMNS), self.extractor, self.recipe, funnel, files,
                                     review, hits)
        return ExtractResult(unit.name, funnel, unmapped=collapser.summary(), hits=dict(hits))
