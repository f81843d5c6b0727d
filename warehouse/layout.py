"""Where things live in a warehouse folder; the one place that knows the paths."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

DEFAULT_WAREHOUSE = Path(__file__).resolve().parent.parent / "data"
_VERSION = re.compile(r"^v(\d+)$")


def resolve_warehouse(path: str | Path | None = None) -> Path:
    """--warehouse wins, then $EXPRESS_WAREHOUSE, then the git-ignored data/ at the repo root."""
    chosen = path or os.environ.get("EXPRESS_WAREHOUSE") or DEFAULT_WAREHOUSE
    return Path(chosen).expanduser().resolve()


@dataclass(frozen=True)
class Warehouse:
    root: Path

    @classmethod
    def at(cls, path: str | Path | None = None) -> "Warehouse":
        return cls(resolve_warehouse(path))

    @property
    def catalog(self) -> Path:
        return self.root / "catalog.duckdb"

    def run_dir(self, run_id: str) -> Path:
        return self.root / "runs" / run_id

    def quarantine_dir(self, run_id: str) -> Path:
        return self.root / "quarantine" / run_id

    def evaluation_dir(self, run_id: str) -> Path:
        return self.root / "evaluations" / run_id

    def lock_path(self, dataset: str) -> Path:
        return self.dataset_dir(dataset) / ".lock"

    @property
    def catalog_lock(self) -> Path:
        return self.root / ".catalog.lock"

    def rejected_dir(self, dataset: str, version: str, stamp: str) -> Path:
        """Where the gate results of a release that failed its gate are kept (never a release)."""
        return self.root / "rejected" / dataset / f"{version}-{stamp}"

    def dataset_dir(self, dataset: str) -> Path:
        return self.root / dataset

    def release_dir(self, dataset: str, version: str) -> Path:
        return self.dataset_dir(dataset) / version

    def versions(self, dataset: str) -> list[str]:
        d = self.dataset_dir(dataset)
        if not d.is_dir():
            return []
        found = [p.name for p in d.iterdir() if _VERSION.match(p.name) and (p / "manifest.json").exists()]
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
        candidates = (
            [self.release_dir(dataset, version)] if dataset
            else [p for p in self.root.glob(f"*/{version}") if (p / "manifest.json").exists()]
        )
        found = [p for p in candidates if (p / "manifest.json").exists()]
        if not found:
            raise FileNotFoundError(f"no release '{asked}' in warehouse {self.root}")
        if len(found) > 1:
            names = ", ".join(f"{p.parent.name}/{p.name}" for p in found)
            raise ValueError(f"release '{version}' is ambiguous in {self.root}: {names}; use DATASET/VERSION")
        return found[0]
