"""What the data-quality report shows of a release, computed once (warehouse/pages/report.py gathers
it; each section module renders a part of it)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from warehouse.pages.express_reference import Comparison
from warehouse.releases.release import Release
from warehouse.pages.examples import LowestAcceptance, Shown
from warehouse.releases.stats import ReleaseStats


@dataclass
class ReportData:
    """Everything the page shows, computed once."""

    release: Release
    manifest: dict[str, Any]
    stats: ReleaseStats
    express: Comparison
    examples: dict[str, list[Shown]]
    lowest: LowestAcceptance
    placeholders: dict[str, tuple[str, int, int]]  # kind -> (placeholder, occurrences, segments)
    parent: Release | None = None
    parent_stats: ReleaseStats | None = None
    diff: dict[str, Any] | None = None
    parent_missing: str = ""  # the manifest names a parent that is no longer in the warehouse
    review: dict[str, Any] | None = None
    docs_link: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.release.dataset} {self.release.version}"

    @property
    def parent_name(self) -> str:
        return self.parent.version if self.parent else ""
