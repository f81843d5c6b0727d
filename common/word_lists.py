"""Versioned word lists shipped as data files (bot authors, NSFW subreddits, intensifiers).

A list file has a `# version: NAME` header, `#` comments, and one case-insensitive entry a line.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class ListError(ValueError):
    """A list file that is missing or has no version header; names the file."""


@dataclass(frozen=True)
class NameList:
    version: str
    names: frozenset[str]
    path: str = ""


def load_list(path: str | Path) -> NameList:
    p = Path(path)
    if not p.is_file():
        raise ListError(f"{p}: list file not found")
    version, names = "", set()
    for line in p.read_text(encoding="utf-8").splitlines():
        text = line.strip()
        if text.startswith("#"):
            key, _, value = text.lstrip("#").partition(":")
            if key.strip() == "version" and not version:
                version = value.strip()
            continue
        if text:
            names.add(text.lower())
    if not version:
        raise ListError(f"{p}:1: missing '# version: NAME' header")
    return NameList(version, frozenset(names), str(p))
