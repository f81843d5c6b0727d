"""Loaders for the emotion lexicon and its 10-dim decomposition, shipped as versioned data."""
from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import tomllib

from common.csv_rows import rows_with_start_lines

DATA_DIR = Path(__file__).parent / "data"
DIMS: tuple[str, ...] = (
    "anger", "anticipation", "disgust", "fear", "joy",
    "sadness", "surprise", "trust", "positive", "negative",
)
Vector = tuple[int, ...]
ZERO: Vector = (0,) * len(DIMS)


def data_versions() -> dict[str, dict[str, str]]:
    """The declared version and checksum of each shipped data file."""
    with open(DATA_DIR / "versions.toml", "rb") as fh:
        return tomllib.load(fh)


@lru_cache(maxsize=None)
def lexicon_terms(path: str | None = None) -> frozenset[str]:
    """The EXPRESS lexicon strings, lower-cased (bases, variants, stems, multiword items)."""
    file = Path(path) if path else DATA_DIR / data_versions()["lexicon"]["file"]
    with open(file, encoding="utf-8") as fh:
        return frozenset(line.strip().lower() for line in fh if line.strip())


@dataclass(frozen=True)
class Decomposition:
    """Word -> 10-dim 0/1 vector; a word not in the table gets the all-zero vector (as the paper)."""

    vectors: dict[str, Vector]

    def vector(self, word: str) -> Vector:
        return self.vectors.get(word.strip().lower(), ZERO)

    def __contains__(self, word: str) -> bool:
        return word.strip().lower() in self.vectors


def load_decomposition(path: str | Path | None = None) -> Decomposition:
    """Read a decomposition CSV (`word` + the ten DIMS columns, values 0/1 or 0.0/1.0)."""
    file = Path(path) if path else DATA_DIR / data_versions()["decomposition"]["file"]
    vectors: dict[str, Vector] = {}
    with open(file, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [d for d in ("word", *DIMS) if d not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{file}: missing columns {missing}")
        for line_no, row in rows_with_start_lines(reader):
            try:
                vec = tuple(int(float(row[d])) for d in DIMS)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{file}:{line_no}: bad value in row {row!r}") from exc
            vectors[row["word"].strip().lower()] = vec
    return Decomposition(vectors)


@lru_cache(maxsize=None)
def default_decomposition() -> Decomposition:
    return load_decomposition()
