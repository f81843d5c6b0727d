"""Knowledge cutoffs: `--cutoff DATE`, else the first entry of the cutoffs files whose name pattern
matches the model (a user's `--cutoffs FILE` first, then the shipped evaluation/data/cutoffs.toml).
A model no entry names gets no cutoff: a guessed one would split the rows in the wrong place.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemas.config import ConfigError, utc_seconds

from evaluation.datafiles import DATA_DIR, read_data_file
from evaluation.live.window import iso

CUTOFFS_FILE = DATA_DIR / "cutoffs.toml"
_ENTRY_KEYS = {"pattern", "cutoff", "stated", "source"}


@dataclass(frozen=True)
class Entry:
    pattern: str
    at: int  # Unix seconds: rows posted before it are "before"
    stated: str
    source: str


@dataclass(frozen=True)
class CutoffTable:
    version: str
    path: str
    sha256: str
    entries: tuple[Entry, ...]

    def match(self, model: str) -> Entry | None:
        name = model.strip().lower()
        return next((e for e in self.entries if fnmatch.fnmatchcase(name, e.pattern.lower())), None)


def load_cutoffs(path: str | Path | None = None) -> CutoffTable:
    """Load and check a cutoffs file; errors name the file and the entry."""
    p = Path(path) if path else CUTOFFS_FILE
    data, sha256 = read_data_file(p)
    if set(data) - {"version", "models"}:
        raise ConfigError(f"{p}: unknown keys {sorted(set(data) - {'version', 'models'})} (expected version, [[models]])")
    models = data.get("models", [])
    if not isinstance(models, list):
        raise ConfigError(f"{p}: `models` must be [[models]] tables, got {models!r}")
    entries = []
    for i, entry in enumerate(models):
        where = f"{p} [[models]] #{i + 1}"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: must be a table")
        if set(entry) - _ENTRY_KEYS:
            raise ConfigError(f"{where}: unknown keys {sorted(set(entry) - _ENTRY_KEYS)}")
        for key in ("pattern", "cutoff"):
            if not isinstance(entry.get(key), str) or not entry[key].strip():
                raise ConfigError(f"{where}: needs a `{key}` string")
        for key in ("stated", "source"):
            if not isinstance(entry.get(key, ""), str):
                raise ConfigError(f"{where} ({entry['pattern']}): `{key}` must be a string, got {entry[key]!r}")
        try:
            at = utc_seconds(entry["cutoff"])
        except ValueError as exc:
            raise ConfigError(f"{where} ({entry['pattern']}) cutoff: {exc}") from None
        entries.append(Entry(entry["pattern"], at, str(entry.get("stated", "")), str(entry.get("source", ""))))
    return CutoffTable(data["version"], str(p), sha256, tuple(entries))


def resolve_cutoff(model: str, cutoff: str = "", cutoffs_file: str = "") -> dict[str, Any]:
    """What a run stores: the boundary (or none) and where it came from."""
    if cutoff:
        return {"cutoff": iso(utc_seconds(cutoff)), "source": "--cutoff"}
    tables = [load_cutoffs(cutoffs_file)] if cutoffs_file else []
    tables.append(load_cutoffs())
    for table in tables:
        entry = table.match(model) if model else None
        if entry is not None:
            return {"cutoff": iso(entry.at), "source": f"{table.path} ({table.version}): '{entry.pattern}'",
                    "stated": entry.stated, "reference": entry.source}
    files = " or ".join(t.path for t in tables)
    why = f"model '{model}' is not in {files}" if model else "the predictor has no model name"
    return {"cutoff": None, "source": f"{why}; give --cutoff DATE"}
