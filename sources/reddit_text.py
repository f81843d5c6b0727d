"""Reddit's text as its author typed it: HTML entities decoded once, invisible characters settled.

Reddit's JSON escapes `&`, `<` and `>` in `title`, `selftext` and `body` (`&amp;`, `&lt;`, `&gt;`;
some records also `&quot;` and `&#39;`) unless the client asks for `raw_json=1`, which praw always
does. So one `html.unescape` turns a dump line's text into the Markdown the author wrote, and a praw
row is that Markdown already. Decoding twice would be wrong: a typed `&lt;` must stay `&lt;`.

That Markdown can still hold the references Reddit's editor writes for invisible characters
(`&#x200B;` for an empty paragraph, `&nbsp;`), which a dump escapes twice. Those references, and the
characters themselves, become what `sources/data/reddit_text.toml` says: nothing or a plain space.
Any other Markdown, other entities included, stays as written.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import tomllib

TABLE = Path(__file__).parent / "data" / "reddit_text.toml"
# A character reference or a named entity, with its semicolon (as Reddit's Markdown requires).
_REFERENCE = re.compile(r"&(?:#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});")
_KINDS = {"remove": "", "space": " "}


@dataclass(frozen=True)
class InvisibleCharacters:
    """What each invisible character becomes ("" or " "), from a versioned data file."""

    version: str
    becomes: dict[str, str]
    _found: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        chars = "".join(re.escape(c) for c in sorted(self.becomes))
        object.__setattr__(self, "_found", re.compile(f"[{chars}]" if chars else r"(?!)"))

    def settle(self, text: str) -> str:
        """The text with the listed characters, and references to them, replaced."""
        if "&" in text:
            text = _REFERENCE.sub(self._reference, text)
        if text.isascii():  # most texts: none of the characters can be there
            return text
        return self._found.sub(lambda m: self.becomes[m.group()], text)

    def _reference(self, m: re.Match[str]) -> str:
        char = html.unescape(m.group())
        return self.becomes.get(char, m.group())


def load_table(path: str | Path = TABLE) -> InvisibleCharacters:
    """The table of a data file: `version`, and code points (`U+200B`) under `remove` and `space`."""
    p = Path(path)
    with open(p, "rb") as fh:
        data = tomllib.load(fh)
    becomes: dict[str, str] = {}
    for kind, replacement in _KINDS.items():
        for point in data.get(kind, []):
            if not re.fullmatch(r"U\+[0-9A-Fa-f]{4,6}", point):
                raise ValueError(f"{p}: [{kind}] {point!r} is not a code point like U+200B")
            becomes[chr(int(point[2:], 16))] = replacement
    if not data.get("version"):
        raise ValueError(f"{p}: missing version")
    return InvisibleCharacters(str(data["version"]), becomes)


@lru_cache(maxsize=1)
def default_table() -> InvisibleCharacters:
    return load_table()


def author_text(raw: str, escaped: bool = True) -> str:
    """What the author typed: `raw` decoded once when Reddit escaped it (a dump line, an API answer
    without raw_json), its invisible characters settled either way."""
    text = html.unescape(raw) if escaped and "&" in raw else raw
    return default_table().settle(text)
