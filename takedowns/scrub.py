"""Taking taken-down posts out of the warehouse's files that are neither releases nor build work
(those are warehouse/withdrawn.py's and pipeline/takedown_shards.py's): a row or line holding one
leaves its file, a JSON value holding one leaves its document, a page or answer holding one is
deleted; each file is rewritten whole (temp file, rename) or left as it is."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq
import zstandard

from common.files import write_atomic
from takedowns.finder import REFERENCES, Finder, file_hits, file_kind, json_lines

REDACTED = "[taken down]"


def _record_of(value: Any, finder: Finder, key: str) -> bool:
    """Is a list item a taken-down post's own record (a value, or an object naming it)?"""
    if isinstance(value, dict):
        return any(k not in REFERENCES and finder.id_hit(v) for k, v in value.items()) or (
            finder.authors is not None and "id" in value and isinstance(value.get("author"), str)
            and finder.authors(value["author"]))
    return not isinstance(value, list) and finder.in_json(value, key)


def redact(obj: Any, finder: Finder, key: str = "") -> Any:
    """A JSON value without the taken-down posts: a list item that is one's record leaves, a
    string holding one's id or text elsewhere becomes REDACTED."""
    if isinstance(obj, dict):
        return {k: redact(v, finder, k) for k, v in obj.items()}
    if isinstance(obj, list):
        return [redact(v, finder, key) for v in obj if not _record_of(v, finder, key)]
    return REDACTED if finder.in_json(obj, key) else obj


def _lines_without(path: Path, finder: Finder) -> list[bytes]:
    return [line for _, line, value in json_lines(path)
            if not (finder.in_json(value) if value is not None else finder.in_text(line.decode("utf-8", "replace")))]


def scrub_file(path: Path, finder: Finder, delete: bool = False) -> str | None:
    """Take the taken-down posts out of one file; returns what was done ("rewritten", "deleted")
    or None when it held none. `delete`: a file that holds one is deleted rather than rewritten
    (a cached answer, a page)."""
    hit = file_hits(path, finder)
    if hit is None:
        return None
    kind = file_kind(path)
    if delete or kind in ("text", "other"):
        path.unlink()
        return "deleted"
    if kind == "parquet":
        table = pq.read_table(path)
        kept = table.filter(pc.invert(finder.rows_hit(table)))
        tmp = path.with_name(f".takedown-{path.name}")
        pq.write_table(kept, tmp, compression="zstd")
        tmp.replace(path)
    elif kind == "lines":
        data = b"".join(line + b"\n" for line in _lines_without(path, finder))
        if path.name.endswith(".zst"):
            data = zstandard.ZstdCompressor(level=3).compress(data)
        write_atomic(path, data)
    else:
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):  # not JSON after all: its text held one
            path.unlink()
            return "deleted"
        write_atomic(path, (json.dumps(redact(value, finder), indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return "rewritten"


def scrub_tree(root: Path, finder: Finder, delete: bool = False) -> dict[str, str]:
    """scrub_file over every file under `root`; path -> what was done."""
    done = {}
    for path in sorted(root.rglob("*")) if root.is_dir() else []:
        if path.is_file() and (what := scrub_file(path, finder, delete)) is not None:
            done[str(path)] = what
    return done
