"""Versioned name lists (bot authors, NSFW subreddits) shipped as data files in filters/data.

A list file has a `# version: NAME` header, `#` comments, and one case-insensitive name a line.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DATA_DIR = Path(__file__).parent / "data"
DEFAULT_FILES = {"bot_authors": DATA_DIR / "bot_authors.txt", "nsfw_subreddits": DATA_DIR / "nsfw_subreddits.txt"}


class ListError(ValueError):
    """A list file that is missing or has no version header; names the file."""


@dataclass(frozen=True)
class NameList:
    version: str
    names: frozenset[str]
    path: str = ""


def resolve_list(setting: str, kind: str) -> Path | None:
    """The file a recipe setting points to: "default" = the shipped list, "" = no list."""
    if not setting:
        return None
    return DEFAULT_FILES[kind] if setting == "default" else Path(setting)


def load_list(path: str | Path) -> NameList:
    p = Path(path)
    if not p.is_file():
        raise ListError(f"{p}: list file not found")
    version, names = "", set()
    for line_no, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
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
