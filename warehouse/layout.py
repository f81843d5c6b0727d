"""Where things live in a warehouse folder; the one place that knows the paths."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from common.errors import InputError

DEFAULT_WAREHOUSE = Path(__file__).resolve().parent.parent / "data"
_VERSION = re.compile(r"^v(\d+)$")
MANIFEST = "manifest.json"
CATALOG = "catalog.duckdb"


def resolve_warehouse(path: str | Path | None = None) -> Path:
    """--warehouse wins, then $EXPRESS_WAREHOUSE, then the git-ignored data/ at the repo root; a
    path that cannot hold a warehouse (a file, a folder where its catalog file belongs) is refused
    before anything is written."""
    chosen = path or os.environ.get("EXPRESS_WAREHOUSE") or DEFAULT_WAREHOUSE
    root = Path(chosen).expanduser().resolve()
    check_warehouse(root)
    return root


def check_warehouse(root: Path) -> None:
    """InputError naming the path when `root` is a file or lies under one, or when its catalog's
    name is taken by a folder (DuckDB would fail only after a release was renamed into place)."""
    for at in (root, *root.parents):
        if at.exists():
            if not at.is_dir():
                where = "is a file" if at == root else f"lies under {at}, a file"
                raise InputError(f"warehouse {root}: {where}, not a folder (--warehouse DIR or EXPRESS_WAREHOUSE)")
            break
    catalog = root / CATALOG
    if catalog.exists() and not catalog.is_file():
        raise InputError(f"{catalog}: a folder where the warehouse keeps its DuckDB catalog file; move it away")


@dataclass(frozen=True)
class Warehouse:
    root: Path

    @classmethod
    def at(cls, path: str | Path | None = None) -> "Warehouse":
        return cls(resolve_warehouse(path))

    @classmethod
    def of_release(cls, release_dir: Path) -> "Warehouse":
        """The warehouse that holds a release folder (<warehouse>/<dataset>/<version>)."""
        return cls(Path(release_dir).resolve().parent.parent)

    @classmethod
    def of_run(cls, run_dir: Path) -> "Warehouse":
        """The warehouse that holds a build run's folder (<warehouse>/runs/<run-id>)."""
        return cls(Path(run_dir).resolve().parent.parent)

    @property
    def catalog(self) -> Path:
        return self.root / CATALOG

    @property
    def runs(self) -> Path:
        return self.root / "runs"

    def run_dir(self, run_id: str) -> Path:
        return self.runs / run_id

    def run(self, run_id: str) -> "RunPaths":
        return RunPaths(self.run_dir(run_id))

    def quarantine_dir(self, run_id: str) -> Path:
        return self.root / "quarantine" / run_id

    def quarantine(self, run_id: str, step: str) -> Path:
        """A run's quarantine of one stage (ingest, extract): every record it dropped, with why."""
        return quarantine_file(self.quarantine_dir(run_id), step)

    def inputs_dir(self, kind: str) -> Path:
        """Inputs the project itself writes: `demo` (the demo corpus), `praw` (live pulls)."""
        return self.root / "inputs" / kind

    @property
    def input_hashes(self) -> Path:
        """sha256 of every input read, by (path, size, mtime), so a dump is hashed once."""
        return self.root / "inputs" / "sha256.json"

    @property
    def evaluations(self) -> Path:
        return self.root / "evaluations"

    def evaluation_dir(self, run_id: str) -> Path:
        return self.evaluations / run_id

    def evaluation(self, run_id: str) -> EvaluationPaths:
        return EvaluationPaths(self.evaluation_dir(run_id))

    @property
    def response_cache(self) -> Path:
        """Cached chat-model answers, shared by every evaluation run."""
        return self.root / "cache" / "responses"

    @property
    def file_checks(self) -> Path:
        """The sha256 of release files already checked, by path, size and modification time."""
        return self.root / "cache" / "release-files.json"

    @property
    def reviews(self) -> Path:
        return self.root / "reviews"

    def reviews_dir(self, dataset: str) -> Path:
        """A dataset's hand-review folder: its ledger and item registry (review/)."""
        return self.reviews / dataset

    def review(self, dataset: str) -> "ReviewPaths":
        return ReviewPaths(self.reviews_dir(dataset))

    def report_path(self, dataset: str, version: str) -> Path:
        return self.root / "reports" / dataset / version / "report.html"

    def card_dir(self, dataset: str, version: str) -> Path:
        return self.root / "cards" / dataset / version

    def lock_path(self, dataset: str) -> Path:
        """Held while a release of `dataset` is published."""
        return self.dataset_dir(dataset) / ".lock"

    def rebuild_lock(self, dataset: str) -> Path:
        """Held while `dataset` is rebuilt: a second rebuild would read the same parent."""
        return self.dataset_dir(dataset) / ".rebuild.lock"

    @property
    def catalog_lock(self) -> Path:
        return self.root / ".catalog.lock"

    @property
    def takedowns(self) -> "TakedownPaths":
        """The takedown ledger, its key and the state of `express takedown apply`."""
        return TakedownPaths(self.root / "takedowns")

    @property
    def exports(self) -> Path:
        """The record of copies written outside the warehouse (warehouse/ledgers/exports.py): batch files."""
        return self.root / "exports"

    def rejected_dir(self, dataset: str, version: str, stamp: str) -> Path:
        """Where the gate results of a release that failed its gate are kept (never a release)."""
        return self.root / "rejected" / dataset / f"{version}-{stamp}"

    def dataset_dir(self, dataset: str) -> Path:
        return self.root / dataset

    def release_dir(self, dataset: str, version: str) -> Path:
        return self.dataset_dir(dataset) / version

    def releases(self) -> list[ReleasePaths]:
        """Every published release folder, by dataset and version, damaged ones included."""
        return [ReleasePaths(p) for p in sorted(self.root.glob("*/v*")) if _VERSION.match(p.name)
                and ReleasePaths(p).published]

    def versions(self, dataset: str) -> list[str]:
        d = self.dataset_dir(dataset)
        if not d.is_dir():
            return []
        found = [p.name for p in d.iterdir() if _VERSION.match(p.name) and ReleasePaths(p).published]
        return sorted(found, key=lambda v: int(v[1:]))

    def next_version(self, dataset: str) -> str:
        d = self.dataset_dir(dataset)
        taken = [int(m.group(1)) for p in (d.iterdir() if d.is_dir() else []) if (m := _VERSION.match(p.name))]
        return f"v{max(taken, default=0) + 1}"

    def find_release(self, version: str, dataset: str | None = None) -> Path:
        """A release folder by `version` or `dataset/version`; error if missing or ambiguous."""
        asked = version
        if "/" in version:
            dataset, version = version.split("/", 1)
        candidates = [self.release_dir(dataset, version)] if dataset else list(self.root.glob(f"*/{version}"))
        found = [p for p in candidates if ReleasePaths(p).published]
        if not found:
            raise FileNotFoundError(f"no release '{asked}' in warehouse {self.root}")
        if len(found) > 1:
            names = ", ".join(f"{p.parent.name}/{p.name}" for p in found)
            raise ValueError(f"release '{version}' is ambiguous in {self.root}: {names}; use DATASET/VERSION")
        return found[0]


def quarantine_file(folder: Path, step: str) -> Path:
    """The quarantine file of a stage in a run's quarantine folder."""
    return folder / f"{step}.parquet"


@dataclass(frozen=True)
class ExtractTables:
    """The extract step's tables, named alike where a shard writes them and where its run assembles them."""

    root: Path

    @property
    def examples(self) -> Path:
        return self.root / "examples.parquet"

    @property
    def disclosures(self) -> Path:
        return self.root / "disclosures.parquet"


@dataclass(frozen=True)
class RunPaths(ExtractTables):
    """One build run's folder, <warehouse>/runs/<run-id>/: what it read and how, its shards, and the
    tables assembled from them (pipeline/ writes them; review/ reads the disclosures)."""

    @classmethod
    def of_shard(cls, shard_dir: Path) -> "RunPaths":
        """The run a shard folder belongs to (<run>/shards/<shard>)."""
        return cls(Path(shard_dir).parent.parent)

    @property
    def run_file(self) -> Path:
        return self.root / "run.json"  # inputs, shard size and recipe, written once

    @property
    def recipe(self) -> Path:
        return self.root / "recipe.json"  # the recipe every step of the run reads

    @property
    def review(self) -> Path:
        return self.root / "review.json"  # the review-ledger version the run applies

    @property
    def takedowns(self) -> Path:
        return self.root / "takedowns.json"  # the takedown-ledger version the run honours

    @property
    def lock(self) -> Path:
        return self.root / "run.lock"

    @property
    def shards(self) -> Path:
        return self.root / "shards"

    @property
    def unmapped(self) -> Path:
        return self.root / "unmapped.json"

    def funnel(self, step: str) -> Path:
        return self.root / f"{step}_funnel.json"

    @property
    def manifest_extra(self) -> Path:
        return self.root / "manifest-extra.json"  # manifest fields kept for a later publish

    @property
    def prescans(self) -> Path:
        return self.root / "pii-prescan"  # the gate's PII scan of each shard, done while others extract

    @property
    def dedupe_spill(self) -> Path:
        return self.root / "dedupe-spill"

    def relabel_dir(self, k: int, shard_name: str) -> Path:
        """Where a rebuild re-derives the labels of its parent's shard k."""
        return self.root / "relabel" / f"{k:05d}-{shard_name}"


@dataclass(frozen=True)
class ReleasePaths:
    """One release's folder, <warehouse>/<dataset>/<version>/: its manifest, its data files and the
    results of its quality gate (warehouse/releases/publish.py writes them, once)."""

    root: Path

    @property
    def manifest(self) -> Path:
        return self.root / MANIFEST

    @property
    def published(self) -> bool:
        """A release folder is published once it is in place: it is renamed in whole, with its
        manifest and data. One of them gone is a damaged release (warehouse/releases/integrity.py names
        what is wrong), never no release."""
        return self.manifest.exists() or self.data.is_dir()

    @property
    def manifest_sum(self) -> Path:
        """The manifest's sha256, as `sha256sum -c` reads it (written with it, checked by every reader)."""
        return self.root / f"{MANIFEST}.sha256"

    @property
    def data(self) -> Path:
        return self.root / "data"

    @staticmethod
    def split_name(split: str, shard: int = 0, shards: int = 1) -> str:
        """A data file's name relative to the release folder, as the manifest lists it."""
        return f"data/{split}-{shard:05d}-of-{shards:05d}.parquet"

    def split_file(self, split: str) -> Path:
        return self.root / self.split_name(split)

    @property
    def gate(self) -> Path:
        return self.root / "gate"

    @property
    def gate_files(self) -> "GatePaths":
        return GatePaths(self.gate)

    @property
    def data_docs(self) -> Path:
        return self.gate_files.data_docs

    @property
    def withdrawn(self) -> Path:
        """The sidecar that marks the release withdrawn (next to it: the release stays immutable)."""
        return self.root.parent / f"{self.root.name}.withdrawn.json"


@dataclass(frozen=True)
class CardPaths:
    """A dataset card folder (`express card --out DIR`, or `<warehouse>/cards/<dataset>/<version>`), as
    the Hugging Face Hub reads one: the card, the data files, Croissant, the data-quality report."""

    root: Path

    @property
    def readme(self) -> Path:
        return self.root / "README.md"  # the dataset card

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def croissant(self) -> Path:
        return self.root / "croissant.json"

    @property
    def report(self) -> Path:
        return self.root / "report.html"  # self-contained, so it travels with the folder; the card links it


@dataclass(frozen=True)
class SitePaths:
    """A static site of the benchmark (`express site --out DIR`): its index, a page per release with
    the release's data-quality report beside it, a page per run."""

    root: Path

    @property
    def index(self) -> Path:
        return self.root / "index.html"

    def release_page(self, dataset: str, version: str) -> Path:
        return self.root / dataset / version / "index.html"

    def release_report(self, dataset: str, version: str) -> Path:
        return self.root / dataset / version / "report.html"

    def run_page(self, run_id: str) -> Path:
        return self.root / "runs" / f"{run_id}.html"

    def href(self, page: Path, target: Path) -> str:
        """A link from one page of the site to another, relative (the site may be served anywhere)."""
        return Path(*[".."] * (len(page.relative_to(self.root).parts) - 1), target.relative_to(self.root)).as_posix()


@dataclass(frozen=True)
class GatePaths:
    """A gate's results folder (a release's `gate/`, or a refused release's under `rejected/`)."""

    root: Path

    @property
    def results(self) -> Path:
        return self.root / "results.json"  # the summary and Great Expectations' results

    @property
    def summary(self) -> Path:
        return self.root / "summary.json"

    @property
    def data_docs_dir(self) -> Path:
        return self.root / "data_docs"

    @property
    def data_docs(self) -> Path:
        return self.data_docs_dir / "index.html"

    @property
    def spill(self) -> Path:
        return self.root / "duckdb-spill"  # DuckDB's temporary files while it validates, removed after


@dataclass(frozen=True)
class LedgerFolder:
    """A folder that holds an append-only ledger and the lock its appends take."""

    root: Path

    @property
    def ledger(self) -> Path:
        return self.root / "ledger"  # one batch file per append (an import, a takedown): 000001.jsonl, ...

    @property
    def ledger_lock(self) -> Path:
        return self.root / ".ledger.lock"


@dataclass(frozen=True)
class ReviewPaths(LedgerFolder):
    """<warehouse>/reviews/<dataset>/: the hand-review ledger of a dataset and its item registry."""

    @property
    def items(self) -> Path:
        return self.root / "items.jsonl"  # every item exported for review, by id

    @property
    def items_lock(self) -> Path:
        return self.root / ".items.lock"


@dataclass(frozen=True)
class TakedownPaths(LedgerFolder):
    """<warehouse>/takedowns/: the append-only ledger of taken-down posts and authors, the key that
    hashes authors (never copied into a release, a log or the repository), and apply's state."""

    @property
    def key(self) -> Path:
        return self.root / "key"

    @property
    def apply_lock(self) -> Path:
        return self.root / ".apply.lock"

    @property
    def applied(self) -> Path:
        return self.root / "applied.json"  # the ledger state the last complete apply honoured


@dataclass(frozen=True)
class EvaluationPaths:
    """One evaluation run's folder, <warehouse>/evaluations/<run-id>/ (evaluation/ writes it): its
    config and status, the predictions, the metrics and analysis, the probe's rows, the report."""

    root: Path

    @property
    def config(self) -> Path:
        return self.root / "config.json"

    @property
    def predictions(self) -> Path:
        return self.root / "predictions.jsonl"

    @property
    def metrics(self) -> Path:
        return self.root / "metrics.json"

    @property
    def analysis(self) -> Path:
        return self.root / "analysis.json"

    @property
    def probe(self) -> Path:
        return self.root / "probe.jsonl"

    @property
    def report_dir(self) -> Path:
        return self.root / "report"

    @property
    def report(self) -> Path:
        return self.report_dir / "report.md"
