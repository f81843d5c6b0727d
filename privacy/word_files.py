"""The one reader of the privacy word files (privacy/data/*.txt): one word or phrase a line under
[section] headers, # comments, matched without regard to case."""
from __future__ import annotations

from pathlib import Path


def read_sections(path: Path) -> dict[str, tuple[str, ...]]:
    """{section: lower-cased entries, in file order}."""
    out: dict[str, list[str]] = {}
    section = None
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = out.setdefault(line[1:-1], [])
        elif section is not None:
            section.append(line.lower())
    return {k: tuple(v) for k, v in out.items()}
