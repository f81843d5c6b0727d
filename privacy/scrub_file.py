"""`express scrub`: the release's PII scrubber over any JSONL of {"id", "text"}.

One output line per (non-blank) input line, in order: {"id", "text": the scrubbed text, "spans":
[{"start", "end", "kind", "placeholder"}]}, offsets into the input text (the found values are not
written again, so the output can be shared). The whole input is checked before anything is
written: a bad line stops the command with its file and line, and no output file appears. Texts
are scrubbed in batches as a build scrubs them (pipeline/filter_shards.py: SCRUB_BATCH), each
settled as the build settles it, so the output is what a release would hold.
"""
from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from common.errors import InputError
from common.jsonl import read_jsonl

BATCH = 256  # texts per batch: the name detector tags a batch at once
PROGRESS_SECONDS = 10.0  # at most one progress line this often


def read_texts(path: str | Path) -> Iterator[tuple[Any, str]]:
    """(id, text) of each line; a line without an id or a string text is an error naming it."""
    for line_no, obj in read_jsonl(path, InputError):
        if "id" not in obj or not isinstance(obj.get("text"), str):
            raise InputError(f"{path}:{line_no}: each line needs an 'id' and a string 'text'")
        yield obj["id"], obj["text"]


def scrub_jsonl(in_path: str | Path, out_path: str | Path, scrubber: Any,
                progress: Callable[[str], None] | None = None) -> int:
    """Write the scrubbed lines; returns how many. `scrubber` is a privacy.scrubber.Scrubber."""
    in_path, out_path = Path(in_path), Path(out_path)
    if not in_path.is_file():
        raise InputError(f"{in_path}: no such file")
    total = sum(1 for _ in read_texts(in_path))  # check every line before writing anything
    say = progress or (lambda msg: print(msg, file=sys.stderr, flush=True))
    tmp = out_path.with_name(out_path.name + ".part")
    started = last = time.monotonic()
    done = 0
    try:
        with open(tmp, "w", encoding="utf-8") as out:
            batch: list[tuple[Any, str]] = []
            for item in read_texts(in_path):
                batch.append(item)
                if len(batch) == BATCH:
                    done += _write(out, batch, scrubber)
                    batch = []
                    if time.monotonic() - last >= PROGRESS_SECONDS:
                        last = time.monotonic()
                        say(f"scrubbed {done:,} of {total:,} texts ({last - started:,.0f} s)")
            done += _write(out, batch, scrubber)
        tmp.replace(out_path)
    finally:
        tmp.unlink(missing_ok=True)
    return done


def _write(out: Any, batch: list[tuple[Any, str]], scrubber: Any) -> int:
    if not batch:
        return 0
    for (id_, _), (text, spans) in zip(batch, scrubber.settled_found([t for _, t in batch])):
        row = {"id": id_, "text": text,
               "spans": [{"start": s.start, "end": s.end, "kind": s.kind, "placeholder": s.placeholder} for s in spans]}
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(batch)
