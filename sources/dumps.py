"""Stream Reddit dump files (Pushshift/Arctic-Shift `.zst` NDJSON, plain `.jsonl`/`.ndjson`).

Lines are split as bytes and decoded one by one, so a UTF-8 sequence cut across decompression
chunks is never broken and a line of garbage is quarantined without stopping the file.

A line is parsed with orjson (faster than the stdlib on dump lines: bench/filters.py). Where orjson
and the stdlib `json` could disagree, the line is read again as before (UTF-8 decode, `json.loads`),
so every record and every quarantine reason is what the stdlib reader gives
(tests/sources/test_dump_parser.py compares both on hostile lines):
- orjson rejects what `json` accepts (NaN, Infinity, lone surrogate escapes, nesting deeper than
  1024) and rejects all that `json` rejects, so a line orjson rejects takes the stdlib path;
- orjson reads an integer beyond 64 bits as a float, `json` exactly. Number fields are read through
  float anyway (reddit_json._int), so only a float where a post's string is read can differ.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import orjson
import zstandard

from common.errors import UserError
from schemas.records import Malformed, RawPost
from sources.reddit_json import STRING_FIELDS, NotAPost, post_from_json

ZSTD_WINDOW = 2**31  # Pushshift dumps are compressed with a 2 GiB long-distance window
CHUNK = 1 << 20
RAW_PREVIEW = 2000


class DumpError(UserError, RuntimeError):
    """A dump that cannot be read to its end (corrupt or truncated); names file and position."""


def _zst_blocks(fh: BinaryIO, p: Path) -> Iterator[bytes]:
    """Decompressed blocks of a (possibly multi-frame) zstd file; raise DumpError on damage."""
    dctx = zstandard.ZstdDecompressor(max_window_size=ZSTD_WINDOW)
    obj = dctx.decompressobj()
    fed = False
    while chunk := fh.read(CHUNK):
        while chunk:
            try:
                out = obj.decompress(chunk)
            except zstandard.ZstdError as exc:
                raise DumpError(f"{p}: corrupt zstd data near compressed byte {fh.tell()}: {exc}") from exc
            fed = True
            if out:
                yield out
            if obj.eof:
                chunk, obj, fed = obj.unused_data, dctx.decompressobj(), False
            else:
                chunk = b""
    if fed and not obj.eof:
        raise DumpError(f"{p}: truncated zstd stream (file ends at byte {fh.tell()} inside a frame)")


def _plain_blocks(fh: BinaryIO) -> Iterator[bytes]:
    while chunk := fh.read(CHUNK):
        yield chunk


def iter_blocks(path: str | Path) -> Iterator[bytes]:
    """The decompressed bytes of a dump, block by block (lines cross block ends). A missing file is
    a DumpError at once; a corrupt or truncated one while its blocks are read."""
    p = Path(path)
    if not p.exists():
        raise DumpError(f"{p}: no such file")
    return _blocks(p)


def _blocks(p: Path) -> Iterator[bytes]:
    with open(p, "rb") as fh:
        yield from (_zst_blocks(fh, p) if p.suffix == ".zst" else _plain_blocks(fh))


def count_lines(path: str | Path, limit: int) -> int:
    """The number of lines of a dump, counted only up to `limit` (decompressing no further): a
    last line without its newline counts, as the split counts it."""
    lines, open_line = 0, False
    for block in iter_blocks(path):
        lines += block.count(b"\n")
        open_line = not block.endswith(b"\n")
        if lines >= limit:
            return limit
    return min(limit, lines + open_line)


def iter_lines(path: str | Path) -> Iterator[tuple[int, bytes]]:
    """(line number, raw bytes) for every line of a dump, streamed."""
    blocks = iter_blocks(path)
    rest = b""
    line_no = 0
    try:
        for block in blocks:
            parts = block.split(b"\n")  # not (rest + block): that copies every block once more
            if rest:
                parts[0] = rest + parts[0]
            rest = parts.pop()
            for part in parts:
                line_no += 1
                yield line_no, part
    except DumpError as exc:
        raise DumpError(f"{exc}; {line_no} complete lines were read before it") from exc
    if rest:
        yield line_no + 1, rest


def read_dump(path: str | Path, source: str = "dump") -> Iterator[RawPost | Malformed]:
    """Yield a RawPost per good line and a Malformed per bad one, in file order (blank lines skipped)."""
    p = Path(path)
    for line_no, line in iter_lines(p):
        if line.strip():
            yield parse_line(line, str(p), line_no, source)


def parse_line(line: bytes, file: str, line_no: int, source: str) -> RawPost | Malformed:
    """One dump line as a RawPost, or a Malformed naming why (the line's text kept for quarantine)."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return _parse_line_stdlib(line, file, line_no, source)
    if _float_where_string(obj):
        return _parse_line_stdlib(line, file, line_no, source)
    try:
        return post_from_json(obj, source=source, source_file=file, source_line=line_no)
    except NotAPost as exc:  # orjson accepted it, so it is valid UTF-8
        return Malformed(file, line_no, line.decode("utf-8")[:RAW_PREVIEW], str(exc))


def _float_where_string(obj: object) -> bool:
    """A float in a field post_from_json reads as a string: it may be an integer beyond 64 bits,
    which `json` reads exactly and str() then spells differently."""
    if type(obj) is not dict:
        return False
    get = obj.get
    for name in STRING_FIELDS:
        if type(get(name)) is float:
            return True
    parents = get("crosspost_parent_list")
    if type(parents) is list and parents and type(first := parents[0]) is dict:
        return type(first.get("name")) is float or type(first.get("id")) is float
    return False


def _parse_line_stdlib(line: bytes, file: str, line_no: int, source: str) -> RawPost | Malformed:
    """The reference reader (stdlib), for the lines orjson cannot read as `json` would."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        preview = line[:RAW_PREVIEW].decode("utf-8", "replace")
        return Malformed(file, line_no, preview, f"bad_utf8: {exc.reason} at byte {exc.start}")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        return Malformed(file, line_no, text[:RAW_PREVIEW], f"bad_json: {exc.msg} at column {exc.colno}")
    except RecursionError:  # json's parser recurses per nesting level; a line of 10,000 '[' ends here
        return Malformed(file, line_no, text[:RAW_PREVIEW], "bad_json: nested too deeply")
    try:
        return post_from_json(obj, source=source, source_file=file, source_line=line_no)
    except NotAPost as exc:
        return Malformed(file, line_no, text[:RAW_PREVIEW], str(exc))
