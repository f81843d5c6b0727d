"""Where a taken-down post is in a file: its id as a whole value (a field, a column, a word of a
page), or its text as the same words in a row (keyed fingerprints, warehouse/fingerprints.py).

A post's id in a field that points at it from another post (a comment's `link_id`) is the other
post's, and is not a hit. Files are read by kind: Parquet (every string column), JSON, JSON lines
(also zstd-compressed dumps), and text (Markdown, HTML with its entities read, CSV, SVG).
"""
from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from common.reddit_ids import post_key
from sources.dumps import iter_lines
from warehouse.fingerprints import TextFinder
from warehouse.takedowns import AuthorMatcher, TakedownSet, taken_down_mask

REFERENCES = frozenset({"link_id", "parent_id", "crosspost_parent"})  # ids of other posts
TEXT_SUFFIXES = (".md", ".html", ".htm", ".txt", ".csv", ".tsv", ".svg", ".xml")
LINE_SUFFIXES = (".jsonl", ".ndjson", ".zst")
_TOKEN = re.compile(r"[0-9A-Za-z_]+")
_TAG = re.compile(r"<[^>]*>")


def file_kind(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(LINE_SUFFIXES):
        return "lines"
    if name.endswith((".json", ".done")):
        return "json"
    if name.endswith(TEXT_SUFFIXES):
        return "text"
    return "other"  # models, arrays, images, the catalog, locks: no text of a post is kept in them


@dataclass
class Finder:
    """The taken-down posts (ids as matched), their authors and the fingerprints of their texts."""

    posts: frozenset[str]
    texts: TextFinder | None = None
    authors: AuthorMatcher | None = None

    @classmethod
    def of(cls, taken: TakedownSet) -> "Finder":
        return cls(taken.posts, taken.text_finder(), taken.author_matcher())

    def id_hit(self, value: Any) -> bool:
        return isinstance(value, str) and post_key(value) in self.posts

    def text_hit(self, value: Any) -> bool:
        return isinstance(value, str) and self.texts is not None and bool(self.texts.posts_in(value))

    def in_json(self, obj: Any, key: str = "") -> bool:
        """Does a JSON value hold a taken-down post (its id as a whole value, its text, or, for a
        raw post, its author)?"""
        if isinstance(obj, dict):
            if self.authors is not None and "id" in obj and isinstance(obj.get("author"), str) \
                    and self.authors(obj["author"]):
                return True
            return any(self.in_json(v, k) for k, v in obj.items())
        if isinstance(obj, list):
            return any(self.in_json(v, key) for v in obj)
        return (key not in REFERENCES and self.id_hit(obj)) or self.text_hit(obj)

    def in_text(self, text: str) -> bool:
        return any(post_key(t) in self.posts for t in _TOKEN.findall(text)) or self.text_hit(text)

    def rows_hit(self, table: pa.Table) -> pa.ChunkedArray | pa.Array:
        """Which rows of a table hold a taken-down post (ids in any string column, or texts)."""
        hit = pa.array([False] * table.num_rows)
        for name in table.column_names:
            col = table[name]
            if pa.types.is_list(col.type) and pa.types.is_string(col.type.value_type):
                flat = [any(self.id_hit(x) or self.text_hit(x) for x in (v or ())) for v in col.to_pylist()]
                hit = pc.or_(hit, pa.array(flat))
            elif pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
                if name not in REFERENCES and self.posts:
                    hit = pc.or_(hit, taken_down_mask(col, self.posts))
                if self.texts is not None:
                    hit = pc.or_(hit, pa.array([self.text_hit(v) for v in col.to_pylist()]))
        return hit


def json_lines(path: Path) -> Iterator[tuple[int, bytes, Any]]:
    """(line number, raw line, its JSON value or None) of a JSON-lines file, zstd-compressed or not."""
    for n, line in iter_lines(path):
        try:
            value = json.loads(line) if line.strip() else None
        except (json.JSONDecodeError, UnicodeDecodeError):
            value = None
        yield n, line, value


def read_text(path: Path) -> str:
    """A text file's words as a reader sees them: markup without its tags, entities read."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix.lower() in (".html", ".htm", ".svg", ".xml"):
        text = html.unescape(_TAG.sub(" ", text))
    return text


def file_hits(path: Path, finder: Finder) -> str | None:
    """Where in a file a taken-down post is (e.g. "line 3"), or None when it holds none."""
    kind = file_kind(path)
    if kind == "parquet":
        try:
            rows = pc.sum(pc.cast(finder.rows_hit(pq.read_table(path)), pa.int64())).as_py() or 0
        except (OSError, pa.ArrowException):
            return None  # not a Parquet file after all
        return f"{rows} rows" if rows else None
    if kind == "lines":
        for n, line, value in json_lines(path):
            hit = finder.in_json(value) if value is not None else finder.in_text(line.decode("utf-8", "replace"))
            if hit:
                return f"line {n}"
        return None
    if kind == "json":
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            return "text" if finder.in_text(path.read_text(encoding="utf-8", errors="replace")) else None
        return "a value" if finder.in_json(value) else None
    if kind == "text":
        return "text" if finder.in_text(read_text(path)) else None
    return None
