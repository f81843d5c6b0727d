"""Versioned name lists (bot authors, NSFW subreddits) shipped as data files in filters/data; the
file format is common/word_lists.py's."""
from __future__ import annotations

from pathlib import Path

from common.word_lists import ListError, NameList, load_list

__all__ = ["DATA_DIR", "DEFAULT_FILES", "ListError", "NameList", "load_list", "resolve_list"]

DATA_DIR = Path(__file__).parent / "data"
DEFAULT_FILES = {"bot_authors": DATA_DIR / "bot_authors.txt", "nsfw_subreddits": DATA_DIR / "nsfw_subreddits.txt"}


def resolve_list(setting: str, kind: str) -> Path | None:
    """The file a recipe setting points to: "default" = the shipped list, "" = no list."""
    if not setting:
        return None
    return DEFAULT_FILES[kind] if setting == "default" else Path(setting)
