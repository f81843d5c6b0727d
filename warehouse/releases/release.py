"""A published release as readers see it: `Release.find` by the name a user gives, `Release.at` by its
folder, each checked against its manifest; its splits, its rows, whether it was withdrawn. Reading
apart from writing: warehouse/releases/publish.py writes a release, once; nothing here writes."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.parquet import iter_rows
from warehouse.layout import ReleasePaths, Warehouse
from warehouse.ledgers.withdrawn import describe, warn_withdrawn, withdrawal
from warehouse.releases.integrity import ReleaseChanged, check_release_files, read_manifest
from warehouse.releases.splits import SPLITS


@dataclass(frozen=True)
class Release:
    dataset: str
    version: str
    path: Path

    @property
    def release_id(self) -> str:
        return f"{self.dataset}/{self.version}"

    @property
    def paths(self) -> ReleasePaths:
        return ReleasePaths(self.path)

    @property
    def manifest_path(self) -> Path:
        return self.paths.manifest

    def manifest(self) -> dict[str, Any]:
        return read_manifest(self.path)

    def split_file(self, split: str) -> Path:
        return self.paths.split_file(split)

    def split_files(self) -> dict[str, Path]:
        """The splits this release actually has, in train/validation/test order."""
        return {s: self.split_file(s) for s in SPLITS if self.split_file(s).exists()}

    @property
    def withdrawn(self) -> dict[str, Any] | None:
        """Its withdrawal record (a takedown took rows of it), or None."""
        return withdrawal(self.path)

    def rows(self, split: str) -> Iterator[dict[str, Any]]:
        """A split's rows in order; a withdrawn release's without the rows the takedown ledger names
        (a command forced to read it writes none of them anywhere)."""
        rows = iter_rows(self.split_file(split))
        if self.withdrawn is None:
            return rows
        from warehouse.ledgers.takedowns import TakedownLedger

        matcher = TakedownLedger(Warehouse.of_release(self.path).root).current().matcher()
        return (r for r in rows if not matcher.id_hit(r["post_id"]))

    @classmethod
    def at(cls, path: Path) -> "Release":
        """The release published at `path`, its files checked against its manifest (ReleaseChanged)."""
        m = read_manifest(path)
        if (withdrawn := withdrawal(path)) is not None and withdrawn.get("purged"):
            raise ReleaseChanged(f"{path}: withdrawn and its files purged ({describe(withdrawn)}; docs/takedowns.md)")
        check_release_files(path, m, Warehouse.of_release(path).file_checks)
        return cls(m["dataset"], m["version"], path)

    @classmethod
    def find(cls, warehouse: Warehouse, version: str) -> "Release":
        """A published release by `VERSION` or `DATASET/VERSION`, as a user names it; errors say which
        warehouse was searched, and a withdrawn release is read with a warning naming its successor."""
        release = cls.at(warehouse.find_release(version))
        if (record := release.withdrawn) is not None:
            warn_withdrawn(release.release_id, record)
        return release
