"""The one JSONL reader: (line number, object) per non-blank line, and a short error naming the
file and line for a line that is not UTF-8, not JSON or not a JSON object."""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


class JsonlError(ValueError):
    """A JSONL line that cannot be read; the message names the file and line."""


def read_jsonl(path: str | Path, error: type[ValueError] = JsonlError) -> Iterator[tuple[int, dict[str, Any]]]:
    """Stream a JSONL file. `error` lets a caller raise its own ValueError subclass (what its CLI
    command already catches); the wording is the same for every caller."""
    p = Path(path)
    with open(p, "rb") as fh:
        yield from parse_jsonl(fh, p, error)


def parse_jsonl(lines: Iterable[str | bytes], where: str | Path,
                error: type[ValueError] = JsonlError) -> Iterator[tuple[int, dict[str, Any]]]:
    """Parse lines already at hand (an open file, or one being hashed as it is read); `where` names
    the file in errors. Lines are counted from 1, blank ones skipped but counted."""
    for n, line in enumerate(lines, start=1):
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise error(f"{where}:{n}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
        if n == 1:
            line = line.removeprefix("\ufeff")  # a byte-order mark some editors write first
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{where}:{n}: not valid JSON ({exc.msg} column {exc.colno})") from exc
        except RecursionError:
            raise error(f"{where}:{n}: not valid JSON (nested too deeply)") from None
        if not isinstance(row, dict):
            raise error(f"{where}:{n}: each line must be a JSON object")
        yield n, row


def read_id_texts(path: str | Path, error: type[ValueError] = JsonlError) -> Iterator[tuple[Any, str]]:
    """(id, text) of each line of a JSONL of {"id", "text"} (what `express extract` and `express
    scrub` read); a line without an id or a string text is an error naming it."""
    for n, row in read_jsonl(path, error):
        if "id" not in row or not isinstance(row.get("text"), str):
            raise error(f"{path}:{n}: each line needs an 'id' and a string 'text'")
        yield row["id"], row["text"]


def check_output(in_path: str | Path, out_path: str | Path, error: type[ValueError] = JsonlError) -> None:
    """Refuse, before any work, an output file that cannot be written where asked, or that is the
    input itself (it would be overwritten)."""
    src, dst = Path(in_path), Path(out_path)
    if not src.is_file():
        raise error(f"{src}: no such file")
    if not dst.parent.is_dir():
        raise error(f"{dst.parent}: no such folder (for the output {dst})")
    if dst.exists() and dst.resolve() == src.resolve():
        raise error(f"{dst}: the output is the input file; give another output path")
