"""Where a taken-down post is in a file, whatever kind of file it is: Parquet (every string column),
JSON, JSON lines (a dump, a pull, predictions), text (Markdown, HTML with its entities read, CSV,
SVG, a file of no known kind that reads as text), each also compressed (`.gz`, `.bz2`, `.xz`,
`.zst`). What counts as a hit is the ledger's one matcher's (common/matching/takedowns.py).
"""
from __future__ import annotations

import bz2
import gzip
import html
import lzma
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import zstandard

from common.matching.takedowns import TakedownMatcher, load_json
from sources.dumps import DumpError, iter_lines

TEXT_SUFFIXES = (".md", ".html", ".htm", ".txt", ".csv", ".tsv", ".svg", ".xml")
MARKUP = (".html", ".htm", ".svg", ".xml")
LINE_SUFFIXES = (".jsonl", ".ndjson")
JSON_SUFFIXES = (".json", ".done")
BINARY = (".parquet", ".npy", ".npz", ".duckdb", ".wal", ".png", ".jpg", ".jpeg", ".gif", ".pdf", ".gguf",
          ".bin", ".safetensors", ".pkl", ".joblib", ".onnx", ".lock")
SNIFF = 8192  # bytes read to tell text from binary in a file of no known kind
_TAG = re.compile(r"<[^>]*>")

COMPRESSED: dict[str, Callable[[Path], BinaryIO]] = {  # streams of the decompressed bytes
    ".gz": lambda p: gzip.open(p, "rb"), ".bz2": lambda p: bz2.open(p, "rb"), ".xz": lambda p: lzma.open(p, "rb"),
    ".zst": lambda p: zstandard.ZstdDecompressor().stream_reader(open(p, "rb"), read_across_frames=True,
                                                                closefd=True),
}
COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    ".gz": lambda b: gzip.compress(b, mtime=0), ".bz2": bz2.compress, ".xz": lzma.compress,
    ".zst": lambda b: zstandard.ZstdCompressor(level=3).compress(b),
}


def compression(path: Path) -> str:
    """The compression suffix of a file (`.gz`, ...), or "" for a file read as it is."""
    suffix = path.suffix.lower()
    return suffix if suffix in COMPRESSED else ""


def file_kind(path: Path) -> str:
    """parquet, lines, json, text or other (read as text if it reads as text), by the name without
    its compression suffix; a compressed file of no known inner kind is read as lines (a dump)."""
    name = path.name.lower()
    packed = compression(path)
    inner = name[: -len(packed)] if packed else name
    if inner.endswith(".parquet"):
        return "parquet"
    if inner.endswith(LINE_SUFFIXES):
        return "lines"
    if inner.endswith(JSON_SUFFIXES):
        return "json"
    if inner.endswith(TEXT_SUFFIXES):
        return "text"
    if packed:
        return "lines"
    return "binary" if inner.endswith(BINARY) else "other"


def raw_bytes(path: Path) -> bytes:
    """A file's bytes, decompressed."""
    packed = compression(path)
    if not packed:
        return path.read_bytes()
    with COMPRESSED[packed](path) as fh:
        return fh.read()


def file_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, raw line) of a file, decompressed as it is read (a dump may be large)."""
    packed = compression(path)
    if packed in ("", ".zst"):
        yield from iter_lines(path)  # sources.dumps: zstd frames as dumps write them
        return
    with COMPRESSED[packed](path) as fh:
        for n, line in enumerate(fh, start=1):
            yield n, line.rstrip(b"\n")


def _looks_like_text(path: Path) -> bool:
    with open(path, "rb") as fh:
        head = fh.read(SNIFF)
    if b"\0" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start > len(head) - 4  # a character cut at the end of the sniffed bytes
    return True


def json_lines(path: Path) -> Iterator[tuple[int, bytes, Any]]:
    """(line number, raw line, its JSON value or None) of a JSON-lines file, compressed or not."""
    for n, line in file_lines(path):
        yield n, line, load_json(line) if line.strip() else None


def read_text(path: Path) -> str:
    """A text file's words as a reader sees them: markup without its tags, entities read."""
    text = raw_bytes(path).decode("utf-8", errors="replace")
    name = path.name.lower().removesuffix(compression(path))
    if name.endswith(MARKUP):
        text = html.unescape(_TAG.sub(" ", text))
    return text


def line_hit(matcher: TakedownMatcher, line: bytes, value: Any) -> bool:
    """A line of a lines file: a JSON value anywhere in it, or its words."""
    if value is not None:
        return matcher.in_json(value)
    return bool(line.strip()) and matcher.in_text(line.decode("utf-8", "replace"))


def file_hits(path: Path, matcher: TakedownMatcher) -> str | None:
    """Where in a file a taken-down post is (e.g. "line 3"), or None when it holds none."""
    kind = file_kind(path)
    try:
        if kind == "parquet":
            try:
                rows = pc.sum(pc.cast(matcher.rows_hit(pq.read_table(path)), pa.int64())).as_py() or 0
            except (OSError, pa.ArrowException):
                return None  # not a Parquet file after all
            return f"{rows} rows" if rows else None
        if kind == "lines":
            return next((f"line {n}" for n, line, value in json_lines(path) if line_hit(matcher, line, value)), None)
        if kind == "json":
            value = load_json(raw_bytes(path))
            if value is None:
                return "text" if matcher.in_text(read_text(path)) else None
            return "a value" if matcher.in_json(value) else None
        if kind == "text" or (kind == "other" and _looks_like_text(path)):
            return "text" if matcher.in_text(read_text(path)) else None
    except (OSError, EOFError, lzma.LZMAError, zstandard.ZstdError, DumpError) as exc:
        return f"unreadable ({type(exc).__name__}): not checked" if _claims(path) else None
    return None


def _claims(path: Path) -> bool:
    """A damaged compressed file cannot be read, so it cannot be said to be clean."""
    return bool(compression(path))

