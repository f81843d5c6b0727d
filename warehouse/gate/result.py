"""What the quality gate returns, apart from the gate itself: publishing reads it without importing
pandas or Great Expectations (a release published without the gate never loads them)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class GateResult:
    success: bool
    summary: dict[str, Any]
    results_path: Path | None = None

    def message(self) -> str:
        return format_failures(self.summary["failures"])


def format_failures(failures: list[dict[str, Any]]) -> str:
    """One line per failed expectation: which check, on how many rows, with examples."""
    lines = []
    for f in failures:
        if f.get("exception"):
            lines.append(f"{f['suite']}: {f['expectation']} ({f['check']}) raised: {f['exception']}")
            continue
        n, rows = f.get("unexpected_count"), f.get("rows")
        where = f"on {n} of {rows} rows" if n is not None else f"observed {f.get('observed_value')!r}"
        examples = json.dumps(f.get("examples", []), default=str)[:600]
        lines.append(f"{f['suite']}: {f['expectation']} {json.dumps(f['kwargs'], default=str)} "
                     f"({f['check']}) failed {where}; examples: {examples}")
    return "\n".join(lines)
