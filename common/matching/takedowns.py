"""The one takedown matcher: does a value, a Reddit record, a raw line, a JSON document, a page or
a table row hold a taken-down post? Built from the ledger (warehouse/ledgers/takedowns.py: TakedownSet.matcher)
and asked by every place that honours it: the build's read (split), the filter, the rewrite of
stored work, apply, verify and the checks of files outside the warehouse.

A post is found by its id as a whole value (`abc12`, `t3_abc12`, any case), by its author (a keyed
hash of the name) in a record that has one, or by its text: the same words as a fingerprinted text
(common/matching/fingerprints.py) in any one string, and in a record also in its title and body read as one
text. An id in a field that points at another post from this one (a comment's `link_id`) is the
other post's, and is not a hit.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from common.matching.fingerprints import Fingerprint, TextFinder
from common.matching.reddit_ids import post_key

REFERENCES = frozenset({"link_id", "parent_id", "crosspost_parent"})  # ids of other posts
TEXT_FIELDS = ("title", "selftext", "body")  # where a Reddit record keeps what its author wrote
_ID_VALUE = re.compile(rb'"(?:id|name)"\s*:\s*"([0-9A-Za-z_]+)"')
_AUTHOR_VALUE = re.compile(rb'"author"\s*:\s*"((?:[^"\\]|\\.)*)"')
_TOKEN = re.compile(r"[0-9A-Za-z_]+")


def author_key(name: str) -> str:
    """An author's name as it is hashed: without `u/`, lower case (Reddit names ignore case)."""
    return re.sub(r"^/?u/", "", str(name).strip(), flags=re.IGNORECASE).lower()


def keyed_hash(key: bytes, value: str) -> str:
    return hmac.new(key, value.encode("utf-8"), hashlib.sha256).hexdigest()


def hash_author(key: bytes, name: str) -> str:
    return keyed_hash(key, author_key(name))


def id_mask(ids: pa.ChunkedArray | pa.Array, posts: Iterable[str]) -> pa.ChunkedArray | pa.Array:
    """Which values of an id column name one of `posts` (as post_key matches; a null never)."""
    keys = pc.replace_substring_regex(pc.utf8_lower(ids), pattern="^t[13]_", replacement="")
    return pc.fill_null(pc.is_in(keys, value_set=pa.array(sorted(posts), pa.string())), False)


def _false(n: int) -> pa.Array:
    return pa.array([False] * n, pa.bool_())  # typed: an empty table's mask is still boolean


def load_json(line: bytes) -> Any:
    """A JSON value as the stdlib reads it (orjson first, for speed), or None when it is not JSON."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            return json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            return None


@dataclass
class TakedownMatcher:
    """`posts`: ids as matched (post_key); `authors`: keyed hashes of names; `prints`: (post,
    fingerprint) of their texts; `key`: the warehouse's key both were made with."""

    posts: frozenset[str] = frozenset()
    authors: frozenset[str] = frozenset()
    prints: tuple[tuple[str, Fingerprint], ...] = ()
    key: bytes | None = None
    digest: str = ""  # what the ledger takes down (TakedownSet.digest): work done for it is not redone
    _names: dict[str, bool] = field(default_factory=dict, repr=False)
    _raw_names: dict[bytes, bool] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if (self.authors or self.prints) and self.key is None:
            raise ValueError("a matcher of authors or texts needs the key they were hashed with")
        self.texts = TextFinder(self.key, self.prints) if self.prints and self.key else None

    def __bool__(self) -> bool:
        return bool(self.posts or self.authors or self.prints)

    def with_posts(self, more: Iterable[str]) -> "TakedownMatcher":
        """The same matcher, finding these posts (as matched) by id too."""
        return replace(self, posts=self.posts | frozenset(more), _names={}, _raw_names={})

    def with_prints(self, more: Iterable[tuple[str, Fingerprint]]) -> "TakedownMatcher":
        """The same matcher, finding these texts too (of posts not resolved in the ledger yet)."""
        return replace(self, prints=tuple(dict.fromkeys([*self.prints, *more])), _names={}, _raw_names={})

    # --- one value
    def id_hit(self, value: Any) -> bool:
        """An id of a taken-down post, as a whole value."""
        return isinstance(value, str) and bool(self.posts) and post_key(value) in self.posts

    def author_hit(self, name: Any) -> bool:
        """A taken-down author's name (each name hashed once: a dump repeats its authors)."""
        if not self.authors or not isinstance(name, str) or not name:
            return False
        hit = self._names.get(name)
        if hit is None:
            hit = self._names[name] = hash_author(self.key, name) in self.authors  # type: ignore[arg-type]
        return hit

    def texts_in(self, value: Any) -> set[str]:
        """The taken-down posts whose text a string holds."""
        return self.texts.posts_in(value) if self.texts is not None and isinstance(value, str) else set()

    def text_hit(self, value: Any) -> bool:
        return bool(self.texts_in(value))

    # --- records and documents
    def post_hit(self, id_: str, author: str, *texts: str) -> bool:
        """A post read from Reddit: its id, its author, its texts alone (title, body) and together."""
        if self.id_hit(id_) or self.author_hit(author):
            return True
        if self.texts is None:
            return False
        return self.text_hit("\n\n".join(t for t in texts if t))  # a field's text is found in them all

    def record_hit(self, obj: dict[str, Any]) -> bool:
        """A Reddit record as its JSON gives it (a dump line, a praw pull), with the posts it embeds
        (a crosspost carries its original whole)."""
        texts = [v for k in TEXT_FIELDS if isinstance(v := obj.get(k), str)]
        if self.post_hit(str(obj.get("id", "")), obj.get("author") or "", *texts) or self.id_hit(obj.get("name")):
            return True
        embedded = obj.get("crosspost_parent_list")
        return isinstance(embedded, list) and any(isinstance(e, dict) and self.record_hit(e) for e in embedded)

    def in_json(self, obj: Any, key: str = "") -> bool:
        """Any JSON value: an id as a whole value (not where another post is pointed at), a text, a
        record's author, a record's title and body read together."""
        if isinstance(obj, dict):
            if "id" in obj and (self.author_hit(obj.get("author")) or self._joined_hit(obj)):
                return True
            return any(self.in_json(v, k) for k, v in obj.items())
        if isinstance(obj, list):
            return any(self.in_json(v, key) for v in obj)
        return (key not in REFERENCES and self.id_hit(obj)) or self.text_hit(obj)

    def _joined_hit(self, obj: dict[str, Any]) -> bool:
        texts = [v for k in TEXT_FIELDS if isinstance(v := obj.get(k), str) and v]
        return self.texts is not None and len(texts) > 1 and self.text_hit("\n\n".join(texts))

    def line_hit(self, line: bytes) -> bool:
        """A raw line of a dump or pull (a Reddit record, JSON): the build's read. Without authors or
        texts to find, ids are read off the line without parsing it."""
        if not line.strip():
            return False
        if not self.authors and self.texts is None:
            return any(post_key(m.decode()) in self.posts for m in _ID_VALUE.findall(line))
        if self.texts is None and not any(post_key(m.decode()) in self.posts for m in _ID_VALUE.findall(line)) \
                and not any(self._author_bytes(m) for m in _AUTHOR_VALUE.findall(line)):
            return False
        obj = load_json(line)
        if isinstance(obj, dict):
            return self.record_hit(obj)
        return self.in_json(obj) if obj is not None else self.in_text(line.decode("utf-8", "replace"))

    def _author_bytes(self, raw: bytes) -> bool:
        hit = self._raw_names.get(raw)
        if hit is None:
            try:
                hit = self.author_hit(json.loads(b'"' + raw + b'"'))
            except (json.JSONDecodeError, UnicodeDecodeError):
                hit = False
            self._raw_names[raw] = hit
        return hit

    def in_text(self, text: str) -> bool:
        """A page or a line that is not JSON: an id as a word of it, or a text."""
        return any(post_key(t) in self.posts for t in _TOKEN.findall(text)) or self.text_hit(text)

    # --- tables
    def id_mask(self, ids: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
        return id_mask(ids, self.posts) if self.posts else _false(len(ids))

    def author_mask(self, names: pa.ChunkedArray | pa.Array) -> pa.Array:
        if not self.authors:
            return _false(len(names))
        hit = [a for a in pc.unique(names).to_pylist() if self.author_hit(a)]
        return pc.fill_null(pc.is_in(names, value_set=pa.array(hit, pa.string())), False)

    def text_mask(self, values: pa.ChunkedArray | pa.Array) -> pa.Array:
        if self.texts is None:
            return _false(len(values))
        return pa.array([bool(v) and self.text_hit(v) for v in values.to_pylist()], pa.bool_())

    def rows_hit(self, table: pa.Table) -> pa.ChunkedArray | pa.Array:
        """Which rows of a table hold a taken-down post: an id in a string column (not a reference),
        an author in an `author` column, a text in any string column or in title and body together."""
        hit: Any = _false(table.num_rows)
        for name in table.column_names:
            col = table[name]
            if pa.types.is_list(col.type) and pa.types.is_string(col.type.value_type):
                flat = [any(self.id_hit(x) or self.text_hit(x) for x in (v or ())) for v in col.to_pylist()]
                hit = pc.or_(hit, pa.array(flat, pa.bool_()))
            elif pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
                if name not in REFERENCES:
                    hit = pc.or_(hit, self.id_mask(col))
                if name == "author":
                    hit = pc.or_(hit, self.author_mask(col))
                hit = pc.or_(hit, self.text_mask(col))
        present = [n for n in TEXT_FIELDS if n in table.column_names and pa.types.is_string(table[n].type)]
        if self.texts is not None and len(present) > 1:
            joined = [self._joined_hit(dict(zip(present, vals))) for vals in zip(*(table[n].to_pylist() for n in present))]
            hit = pc.or_(hit, pa.array(joined, pa.bool_()))
        return hit
