"""Taking taken-down posts out of the warehouse's files that are neither releases nor build work
(those are warehouse/ledgers/withdrawn.py's and takedowns/shards.py's): a row or line holding one
leaves its file, a JSON value holding one leaves its document, a page or answer holding one is
deleted; each file is rewritten whole (temp file, rename), compressed as it was, or left as it is."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from common.files import write_atomic
from common.matching.takedowns import REFERENCES, TakedownMatcher
from takedowns.files import COMPRESSORS, compression, file_hits, file_kind, json_lines, line_hit, raw_bytes

REDACTED = "[taken down]"


def _record_of(value: Any, matcher: TakedownMatcher, key: str) -> bool:
    """Is a list item a taken-down post's own record (a value, or an object naming it)?"""
    if isinstance(value, dict):
        return any(k not in REFERENCES and matcher.id_hit(v) for k, v in value.items()) or (
            "id" in value and matcher.author_hit(value.get("author")))
    return not isinstance(value, list) and matcher.in_json(value, key)


def redact(obj: Any, matcher: TakedownMatcher, key: str = "") -> Any:
    """A JSON value without the taken-down posts: a list item that is one's record leaves, a
    string holding one's id or text elsewhere becomes REDACTED."""
    if isinstance(obj, dict):
        return {k: redact(v, matcher, k) for k, v in obj.items()}
    if isinstance(obj, list):
        return [redact(v, matcher, key) for v in obj if not _record_of(v, matcher, key)]
    return REDACTED if matcher.in_json(obj, key) else obj


def _write(path: Path, data: bytes) -> None:
    packed = compression(path)
    write_atomic(path, COMPRESSORS[packed](data) if packed else data)


def scrub_file(path: Path, matcher: TakedownMatcher, delete: bool = False) -> str | None:
    """Take the taken-down posts out of one file; returns what was done ("rewritten", "deleted")
    or None when it held none. `delete`: a file that holds one is deleted rather than rewritten
    (a cached answer, a page)."""
    hit = file_hits(path, matcher)
    if hit is None:
        return None
    kind = file_kind(path)
    if delete or kind in ("text", "other") or hit == "text" or hit.startswith("unreadable"):
        path.unlink()
        return "deleted"
    if kind == "parquet":
        table = pq.read_table(path)
        kept = table.filter(pc.invert(matcher.rows_hit(table)))
        buffer = pa.BufferOutputStream()
        pq.write_table(kept, buffer, compression="zstd")
        write_atomic(path, buffer.getvalue().to_pybytes())
    elif kind == "lines":
        _write(path, b"".join(line + b"\n" for _, line, value in json_lines(path)
                              if not line_hit(matcher, line, value)))
    else:
        value = json.loads(raw_bytes(path))
        _write(path, (json.dumps(redact(value, matcher), indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return "rewritten"


def scrub_tree(root: Path, matcher: TakedownMatcher, delete: bool = False) -> dict[str, str]:
    """scrub_file over every file under `root`; path -> what was done."""
    done = {}
    for path in sorted(root.rglob("*")) if root.is_dir() else []:
        if path.is_file() and (what := scrub_file(path, matcher, delete)) is not None:
            done[str(path)] = what
    return done
