"""Stream Reddit dump files (Pushshift/Arctic-Shift `.zst` NDJSON, plain `.jsonl`/`.ndjson`).

Lines are split as bytes and decoded one by one, so a UTF-8 sequence cut across decompression
chunks is never broken and a line of garbage is quarantined without stopping the file.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import zstandard

from schemas.records import Malformed, RawPost
from sources.reddit_json import NotAPost, post_from_json

ZSTD_WINDOW = 2**31  # Pushshift dumps are compressed with a 2 GiB long-distance window
CHUNK = 1 << 20
RAW_PREVIEW = 2000


class DumpError(RuntimeError):
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


def iter_lines(path: str | Path) -> Iterator[tuple[int, bytes]]:
    """(line number, raw bytes) for every line of a dump, streamed."""
    p = Path(path)
    if not p.exists():
        raise DumpError(f"{p}: no such file")
    with open(p, "rb") as fh:
        blocks = _zst_blocks(fh, p) if p.suffix == ".zst" else _plain_blocks(fh)
        rest = b""
        line_no = 0
        try:
            for block in blocks:
                parts = (rest + block).split(b"\n")
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
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        preview = line[:RAW_PREVIEW].decode("utf-8", "replace")
        return Malformed(file, line_no, preview, f"bad_utf8: {exc.reason} at byte {exc.start}")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        return Malformed(file, line_no, text[:RAW_PREVIEW], f"bad_json: {exc.msg} at column {exc.colno}")
    try:
        return post_from_json(obj, source=source, source_file=file, source_line=line_no)
    except NotAPost as exc:
        return Malformed(file, line_no, text[:RAW_PREVIEW], str(exc))
