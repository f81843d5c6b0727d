"""The build stages as plain functions over file paths (no Prefect here; flows/ wraps them).

Each stage reads files, streams records through sources/filters/extractors, writes Parquet,
and returns a small JSON-able dict of paths and funnel counts for the next stage.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from extractors.disclosures import DisclosureExtractor
from extractors.examples import build_examples
from extractors.vocabulary import Collapser
from extractors.segmentation import Segmenter
from filters.base import run_filters
from filters.pii import scrub_post
from filters.reddit import filter_data_versions, filters_from_config
from schemas.config import Recipe, recipe_from_dict
from schemas.funnel import Funnel
from schemas.lexicon import data_versions, sha256_file
from schemas.records import DISCLOSURES, EXAMPLES, QUARANTINE, RAW_POSTS, Malformed, RawPost
from schemas.versioning import code_version
from schemas.vocabulary import vocabulary_version
from sources.dumps import DumpError, read_dump
from sources.join import SubmissionFlags, join_comments, order_inputs
from warehouse.layout import Warehouse
from warehouse.parquet import ParquetSink, iter_rows
from warehouse.publish import publish_release


class StageError(RuntimeError):
    """A stage could not finish; the run's funnel so far is saved next to its outputs."""


def save_recipe(recipe: Recipe, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(recipe.to_dict(), indent=2) + "\n")
    return path


def load_saved_recipe(path: str | Path) -> Recipe:
    return recipe_from_dict(json.loads(Path(path).read_text()), str(path))


def _quarantine_row(stage: str, rec: RawPost | Malformed, reason: str, with_text: bool = True) -> dict[str, Any]:
    """A quarantine row; posts dropped after ingest leave the text out, since raw_posts already holds it
    (raw posts are stored once, keyed by id)."""
    if isinstance(rec, Malformed):
        return {"stage": stage, "reason": rec.reason, "post_id": None, "source_file": rec.source_file,
                "source_line": rec.source_line, "raw": rec.raw}
    return {"stage": stage, "reason": reason, "post_id": rec.id, "source_file": rec.source_file,
            "source_line": rec.source_line, "raw": rec.text if with_text else None}


def input_record(path: str, sha256: str | None = None) -> dict[str, Any]:
    """Manifest entry of one raw input: path and sha256 (computed unless given), plus the query of a
    praw scrape (never credentials)."""
    p = Path(path)
    entry: dict[str, Any] = {"path": str(p.resolve()), "sha256": sha256 or sha256_file(p)}
    sidecar = p.with_suffix(".query.json")
    if sidecar.is_file():
        entry["kind"] = "praw"
        entry["query"] = json.loads(sidecar.read_text())
    return entry


def ingest(inputs: list[str], run_dir: str, quarantine_dir: str, recipe_path: str) -> dict[str, Any]:
    """Read dumps (submissions first, comments joined to them), filter, scrub PII, write kept raw posts.

    Dropped and malformed records go to quarantine; a damaged file stops the stage after its funnel
    so far is saved, so nothing is published from it.
    """
    recipe = load_saved_recipe(recipe_path)
    run, quarantine = Path(run_dir), Path(quarantine_dir)
    funnel = Funnel()
    chain = filters_from_config(recipe.filters)
    flags = SubmissionFlags()
    raw = ParquetSink(run / "raw_posts.parquet", RAW_POSTS)
    dropped = ParquetSink(quarantine / "ingest.parquet", QUARANTINE)
    sources = []
    try:
        for path in order_inputs(list(inputs)):
            sources.append(input_record(path))
            records = join_comments(read_dump(path), flags)
            for post in run_filters(records, chain, funnel, lambda r, why: dropped.write(_quarantine_row("ingest", r, why))):
                if recipe.filters.scrub_pii:
                    post = scrub_post(post)
                raw.write_record(post)
    except DumpError as exc:
        _write_funnel(run / "ingest_funnel.json", funnel, error=str(exc))
        raise StageError(f"{exc} (read {funnel.read} records before the error; nothing published)") from exc
    finally:
        raw.close()
        dropped.close()
    funnel.check("ingest")
    _write_funnel(run / "ingest_funnel.json", funnel)
    return {"raw_posts": str(raw.path), "quarantine": str(dropped.path), "funnel": funnel.to_dict(),
            "inputs": sources, "comments_joined": flags.joined,
            "filter_data": filter_data_versions(recipe.filters)}


def scrape(out_dir: str, recipe_path: str) -> dict[str, Any]:
    """Pull what the recipe's [sources] asks for that earlier pulls did not (sources/praw_pulls.py);
    `files` are every pull file of the query, what a build reads."""
    from sources.praw_pulls import pull
    from sources.praw_source import search_terms

    cfg = load_saved_recipe(recipe_path).sources
    return pull(cfg, search_terms(cfg), out_dir).to_dict()


def write_extraction(posts: Iterable[RawPost], extractor: DisclosureExtractor, recipe: Recipe, funnel: Funnel,
                     examples_path: Path, disclosures_path: Path, quarantine_path: Path) -> Collapser:
    """Stream posts through extraction into examples, disclosures and quarantine Parquet files;
    shared by the whole-run and per-shard builds. Returns the unmapped-word counts."""
    collapser = Collapser()
    with ParquetSink(examples_path, EXAMPLES) as examples, \
         ParquetSink(disclosures_path, DISCLOSURES) as disclosures, \
         ParquetSink(quarantine_path, QUARANTINE) as dropped:
        def on_found(post: RawPost, found: list) -> None:
            if found:
                disclosures.write({"post_id": post.id, "disclosures": [d.to_json() for d in found]})

        for ex in build_examples(posts, extractor, recipe.extract, funnel,
                                 on_drop=lambda p, why: dropped.write(_quarantine_row("extract", p, why, False)),
                                 on_disclosures=on_found, segmenter=Segmenter(recipe.segment)):
            collapser.observe(ex.surfaces)
            examples.write(ex.to_row())
    return collapser


def extract(raw_posts: str, run_dir: str, quarantine_dir: str, recipe_path: str) -> dict[str, Any]:
    """Detect disclosures in kept posts and write examples (masked text + labels) and disclosures."""
    recipe = load_saved_recipe(recipe_path)
    run, quarantine = Path(run_dir), Path(quarantine_dir)
    funnel = Funnel()
    extractor = DisclosureExtractor(batch_size=recipe.extract.batch_size, forms=recipe.extract.forms)
    posts = (RawPost(**row) for row in iter_rows(raw_posts))
    collapser = write_extraction(posts, extractor, recipe, funnel, run / "examples.parquet",
                                 run / "disclosures.parquet", quarantine / "extract.parquet")
    funnel.check("extract")
    _write_funnel(run / "extract_funnel.json", funnel)
    (run / "unmapped.json").write_text(json.dumps(collapser.report(), indent=2) + "\n")
    return {"examples": str(run / "examples.parquet"), "disclosures": str(run / "disclosures.parquet"),
            "funnel": funnel.to_dict(), "unmapped": collapser.summary(),
            "unmapped_report": str(run / "unmapped.json")}


def total_funnel(*stages: dict[str, Any]) -> dict[str, Any]:
    """Chain stage funnels: the first stage's read, the last stage's kept, all drops and malformed."""
    funnels = [Funnel.from_dict(s["funnel"]) for s in stages]
    total = Funnel(read=funnels[0].read, kept=funnels[-1].kept,
                   malformed=sum(f.malformed for f in funnels))
    for f in funnels:
        total.dropped.update(f.dropped)
    total.check("build")
    return total.to_dict()


def publish(examples: str, warehouse_root: str, recipe_path: str, run_id: str,
            ingest_result: dict[str, Any], extract_result: dict[str, Any]) -> dict[str, str]:
    recipe = load_saved_recipe(recipe_path)
    versions = data_versions()
    extra = {
        "funnel": total_funnel(ingest_result, extract_result),
        "stages": {"ingest": ingest_result["funnel"], "extract": extract_result["funnel"]},
        "inputs": ingest_result["inputs"],
        "filter_data_versions": ingest_result.get("filter_data", {}),
        "run_id": run_id,
        "code_version": code_version(),
        "lexicon_version": versions["lexicon"]["version"],
        "decomposition_version": versions["decomposition"]["version"],
        "vocabulary_version": vocabulary_version(),
        "segmentation": Segmenter(recipe.segment).describe(),
    }
    release = publish_release(Path(examples), Warehouse.at(warehouse_root), recipe, extra)
    return {"dataset": release.dataset, "version": release.version, "path": str(release.path),
            "manifest": str(release.manifest_path)}


def _write_funnel(path: Path, funnel: Funnel, error: str | None = None) -> None:
    data = funnel.to_dict()
    if error:
        data["error"] = error
    path.write_text(json.dumps(data, indent=2) + "\n")
