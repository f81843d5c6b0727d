"""The canonical emotion vocabulary: each of the 684 EXPRESS lexicon strings mapped to one concept.

The mapping is data (`data/vocabulary.tsv`, versioned in `data/version.toml`); this module only
reads it. Vectors come from the 10-dim decomposition: a surface form absent from it takes its
canonical label's vector (every label has one, `express vocab check` enforces it); a word outside
the vocabulary gets the decomposition's own vector, else the all-zero vector, as the paper does.
"""
from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import tomllib

from common.checksums import sha256_file
from schemas.lexicon import ZERO, Decomposition, Vector, default_decomposition

DATA_DIR = Path(__file__).parent / "data"
VERSION_FILE = DATA_DIR / "version.toml"
COLUMNS = ("surface", "label", "kind", "excluded", "reason")
KINDS = ("base", "inflection", "derivation", "stem", "typo", "multiword")
FLAGS = {"yes": True, "no": False}
HEADER = "\t".join(COLUMNS)


class VocabularyError(ValueError):
    """A vocabulary file that cannot be read; the message names the file and line."""


def normalize(word: str) -> str:
    """The lookup key of a word: lower-cased, curly apostrophe straightened, inner spaces collapsed."""
    return " ".join(word.replace("\u2019", "'").lower().split())


@dataclass(frozen=True, slots=True)
class Entry:
    """One row of the vocabulary file: a lexicon string and what it collapses to."""

    surface: str
    label: str | None
    kind: str
    excluded: bool
    reason: str
    line: int


def declared_version(path: Path = VERSION_FILE) -> dict[str, str]:
    """The declared version and sha256 of the shipped vocabulary file."""
    with open(path, "rb") as fh:
        return tomllib.load(fh)["vocabulary"]


def default_path() -> Path:
    return DATA_DIR / declared_version()["file"]


def read_entries(path: str | Path) -> list[Entry]:
    """Parse a vocabulary TSV; a malformed row raises VocabularyError naming file and line."""
    file = Path(path)
    entries: list[Entry] = []
    with open(file, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None or tuple(h.strip() for h in header) != COLUMNS:
            raise VocabularyError(f"{file}:1: header must be {HEADER!r}, got {header!r}")
        for row in reader:
            line = reader.line_num
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != len(COLUMNS):
                raise VocabularyError(f"{file}:{line}: expected {len(COLUMNS)} tab-separated fields, got {len(row)}")
            surface, label, kind, excluded, reason = (c.strip() for c in row)
            if not surface:
                raise VocabularyError(f"{file}:{line}: empty surface")
            if kind not in KINDS:
                raise VocabularyError(f"{file}:{line}: unknown kind {kind!r} (one of {', '.join(KINDS)})")
            if excluded not in FLAGS:
                raise VocabularyError(f"{file}:{line}: excluded must be 'yes' or 'no', got {excluded!r}")
            entries.append(Entry(normalize(surface), normalize(label) or None, kind, FLAGS[excluded], reason, line))
    return entries


class Vocabulary:
    """Surface word -> canonical label, kind, exclusion and 10-dim vector. Its canonical labels are
    also the labels a release may use (the quality gate checks them)."""

    def __init__(self, entries: list[Entry], decomposition: Decomposition | None, version: str, sha256: str,
                 path: Path | None = None, name: str = "express-vocabulary"):
        self.name = name
        self.entries = {e.surface: e for e in entries}  # a duplicated surface: the last row wins; check() reports it
        self._decomposition = decomposition
        self.version = version
        self.sha256 = sha256
        self.path = path
        groups: dict[str, list[str]] = defaultdict(list)
        for e in self.entries.values():
            if e.label and not e.excluded:
                groups[e.label].append(e.surface)
        self._variants = {label: sorted(s) for label, s in groups.items()}

    @classmethod
    def load(cls, path: str | Path | None = None, decomposition: Decomposition | None = None) -> "Vocabulary":
        """The shipped vocabulary (declared version), or any file (version 'unversioned')."""
        dec = decomposition
        if path is None:
            declared = declared_version()
            file = DATA_DIR / declared["file"]
            return cls(read_entries(file), dec, declared["version"], sha256_file(file), file)
        file = Path(path)
        return cls(read_entries(file), dec, "unversioned", sha256_file(file), file)

    @classmethod
    def from_labels(cls, name: str, version: str, labels: Iterable[str]) -> "Vocabulary":
        """A vocabulary of bare labels (each its own only form), e.g. to gate a release against."""
        entries = [Entry(normalize(w), normalize(w), "label", False, "", 0) for w in labels]
        return cls(entries, None, version, "", name=name)

    def describe(self) -> dict[str, Any]:
        """What a manifest records of the vocabulary a release was checked against."""
        return {"name": self.name, "version": self.version, "size": len(self.labels)}

    @property
    def decomposition(self) -> Decomposition:
        """Loaded on first use, so collapsing labels (in extraction workers) does not read it."""
        if self._decomposition is None:
            self._decomposition = default_decomposition()
        return self._decomposition

    def __contains__(self, word: str) -> bool:
        return normalize(word) in self.entries

    def entry(self, word: str) -> Entry | None:
        return self.entries.get(normalize(word))

    def canonical(self, word: str) -> str | None:
        """The canonical label of a surface form; None when it is excluded or not in the vocabulary."""
        e = self.entry(word)
        return e.label if e is not None and not e.excluded else None

    def kind(self, word: str) -> str | None:
        e = self.entry(word)
        return e.kind if e is not None else None

    def excluded(self, word: str) -> bool:
        e = self.entry(word)
        return e is not None and e.excluded

    def reason(self, word: str) -> str:
        """Why a word is excluded ('' when it is not)."""
        e = self.entry(word)
        return e.reason if e is not None and e.excluded else ""

    @property
    def labels(self) -> list[str]:
        """The canonical labels, sorted."""
        return sorted(self._variants)

    def variants(self, label: str) -> list[str]:
        """Every surface form (the label itself included) that collapses to `label`."""
        return list(self._variants.get(normalize(label), []))

    def vector(self, word: str) -> Vector:
        """The word's own decomposition vector; else its canonical label's; else all-zero."""
        key = normalize(word)
        if key in self.decomposition:
            return self.decomposition.vector(key)
        label = self.canonical(key)
        if label is not None and label in self.decomposition:
            return self.decomposition.vector(label)
        return ZERO

    def vector_source(self, word: str) -> str:
        """Where `vector(word)` comes from: 'own', 'label' (fallback) or 'none' (all-zero)."""
        key = normalize(word)
        if key in self.decomposition:
            return "own"
        label = self.canonical(key)
        return "label" if label is not None and label in self.decomposition else "none"

    def label_vector(self, word: str) -> Vector:
        """The vector of the word's canonical label (all-zero when it has none): compares concepts."""
        label = self.canonical(word)
        return self.decomposition.vector(label) if label is not None else ZERO

    def fallback_vectors(self) -> list[str]:
        """Mapped surface forms absent from the decomposition, which borrow their label's vector."""
        return sorted(s for s, e in self.entries.items()
                      if not e.excluded and e.label and self.vector_source(s) != "own")


@lru_cache(maxsize=None)
def default_vocabulary() -> Vocabulary:
    """The shipped vocabulary, loaded once per process."""
    return Vocabulary.load()


def vocabulary_version() -> str:
    return declared_version()["version"]
