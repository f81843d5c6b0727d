"""The assemble step: join a run's finished shards into its tables, in shard order, and check that
the run's funnels add up (what dedupe kept is exactly what extraction read)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from extractors.vocabulary import Collapser
from pipeline.dedupe_shards import DedupeStep
from pipeline.extract_shards import ExtractStep
from pipeline.filter_shards import FilterStep
from pipeline.results import AssembleResult, StepResult
from pipeline.shards import Shard
from pipeline.steps import Outputs, Step, finished, run_step
from schemas.records import DISCLOSURES, EXAMPLES, QUARANTINE
from warehouse.layout import RunPaths, quarantine_file


@dataclass(frozen=True)
class RunTables:
    """A run's finished shards and where its tables go: the unit of the assemble step."""

    run: RunPaths
    quarantine: Path  # <warehouse>/quarantine/<run-id>/
    shards: list[Shard]
    inputs: list[dict[str, Any]] = field(default_factory=list)  # the manifest's input entries

    @property
    def name(self) -> str:
        return self.run.root.name

    @property
    def recipe(self) -> str:
        return str(self.run.recipe)


def concat_parquet(parts: list[Path], out: Path, schema: Any) -> int:
    """Append the record batches of `parts` into `out` (a path the caller commits); returns rows."""
    rows = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    with pq.ParquetWriter(out, schema, compression="zstd") as writer:
        for part in parts:
            for batch in pq.ParquetFile(part).iter_batches(batch_size=65_536):  # few, large row groups
                writer.write_batch(batch)
                rows += batch.num_rows
    return rows


@dataclass
class QuarantineJoin(StepResult):
    """The run's ingest quarantine: its rows, and the size and mtime of each part it joined."""

    parts: list[list[Any]]
    rows: int = 0


def _ingest_parts(unit: RunTables) -> list[Path]:
    return [p for s in unit.shards for p in (s.quarantine("ingest"), s.quarantine("dedupe"))]


def _parts_key(parts: list[Path]) -> list[list[Any]]:
    return [[str(p), p.stat().st_size, p.stat().st_mtime_ns] for p in parts]


class JoinIngestQuarantine(Step[RunTables, QuarantineJoin]):
    """What filtering and dedupe dropped, in shard order. It is complete once dedupe has finished,
    so a build joins it on the flow process while the workers extract and assemble finds it done;
    redone when any part changed since."""

    name = "ingest-quarantine"
    result = QuarantineJoin

    @classmethod
    def folder(cls, unit: RunTables) -> Path:
        return unit.run.root

    @classmethod
    def stale(cls, unit: RunTables, done: QuarantineJoin, **params: Any) -> bool:
        return done.parts != _parts_key(_ingest_parts(unit)) or not quarantine_file(unit.quarantine, "ingest").exists()

    def run(self, unit: RunTables, out: Outputs, **params: Any) -> QuarantineJoin:
        parts = _ingest_parts(unit)
        rows = concat_parquet(parts, out(quarantine_file(unit.quarantine, "ingest")), QUARANTINE)
        return QuarantineJoin(_parts_key(parts), rows)


def unmapped_report(examples: Path) -> dict[str, Any]:
    """The run's masked words that the vocabulary does not map (and why), from its examples."""
    collapser = Collapser()
    for batch in pq.ParquetFile(examples).iter_batches(batch_size=8192, columns=["surfaces"]):
        for surfaces in batch.column(0).to_pylist():
            collapser.observe(surfaces)
    return collapser.report()


class AssembleStep(Step[RunTables, AssembleResult]):
    """The run's examples, disclosures and quarantine tables and its ingest and extract funnels."""

    name = "assemble"
    result = AssembleResult

    @classmethod
    def folder(cls, unit: RunTables) -> Path:
        return unit.run.root

    def run(self, unit: RunTables, out: Outputs, **params: Any) -> AssembleResult:
        run, shards = unit.run, unit.shards
        done = [(finished(FilterStep, s), finished(DedupeStep, s), finished(ExtractStep, s)) for s in shards]
        missing = [s.name for s, d in zip(shards, done) if None in d]
        if missing:
            raise RuntimeError(f"{run.root}: shards not finished: {', '.join(missing[:5])}")
        filtered = [d[0] for d in done]
        ingest, dedupe = sum(d.funnel for d in filtered), sum(d[1].funnel for d in done)
        ingest.kept = dedupe.kept
        ingest.dropped.update(dedupe.dropped)
        extract = sum(d[2].funnel for d in done)
        if extract.read != ingest.kept:
            raise RuntimeError(f"{run.root}: extract read {extract.read} posts but ingest kept {ingest.kept}")
        concat_parquet([s.examples for s in shards], out(run.examples), EXAMPLES)
        concat_parquet([s.disclosures for s in shards], out(run.disclosures), DISCLOSURES)
        run_step(JoinIngestQuarantine, unit)  # done while the workers extracted, unless a part changed since
        concat_parquet([s.quarantine("extract") for s in shards], out(quarantine_file(unit.quarantine, "extract")), QUARANTINE)
        for name, f in (("ingest", ingest), ("extract", extract)):
            out(run.funnel(name)).write_text(json.dumps(f.to_dict(), indent=2) + "\n")
        unmapped = unmapped_report(out.temporary(run.examples))
        out(run.unmapped).write_text(json.dumps(unmapped, indent=2) + "\n")
        return AssembleResult(ingest, extract, unit.inputs, shards, str(run.examples), str(run.disclosures),
                              sum(d.comments_joined for d in filtered),
                              unmapped={k: v for k, v in unmapped.items() if k != "words"})
