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
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from common.errors import InputError
from common.files import writing
from common.jsonl import check_output, read_id_texts

BATCH = 256  # texts per batch: the name detector tags a batch at once
PROGRESS_SECONDS = 10.0  # at most one progress line this often (one every this often inside a long text)
LONG_TEXT = 100_000  # characters from which a text is announced and scrubbed in a batch of its own


def scrub_jsonl(in_path: str | Path, out_path: str | Path, scrubber: Any,
                progress: Callable[[str], None] | None = None) -> int:
    """Write the scrubbed lines; returns how many. `scrubber` is a privacy.scrubber.Scrubber."""
    in_path, out_path = Path(in_path), Path(out_path)
    check_output(in_path, out_path, InputError)
    total = sum(1 for _ in read_id_texts(in_path, InputError))  # check every line before writing anything
    say = progress or (lambda msg: print(msg, file=sys.stderr, flush=True))
    started = last = time.monotonic()
    done = 0
    with writing(out_path, "w") as out:
        batch: list[tuple[Any, str]] = []
        for n, item in enumerate(read_id_texts(in_path, InputError), start=1):
            if len(item[1]) >= LONG_TEXT:  # said before the wait, scrubbed on its own, said while it lasts
                done += _write(out, batch, scrubber)
                what = f"text {n:,} of {total:,} (id {item[0]!r})"
                say(f"{what} holds {len(item[1]):,} characters: scrubbing it alone, in time that grows "
                    "with its length")
                with heartbeat(say, what):
                    done += _write(out, [item], scrubber)
                batch = []
            else:
                batch.append(item)
            if len(batch) == BATCH or len(item[1]) >= LONG_TEXT:
                done += _write(out, batch, scrubber)
                batch = []
                if time.monotonic() - last >= PROGRESS_SECONDS:
                    last = time.monotonic()
                    say(f"scrubbed {done:,} of {total:,} texts ({last - started:,.0f} s)")
        done += _write(out, batch, scrubber)
    return done


@contextmanager
def heartbeat(say: Callable[[str], None], what: str) -> Iterator[None]:
    """A line every PROGRESS_SECONDS while `what` is scrubbed: one text of megabytes takes minutes,
    with no batch boundary to report at."""
    stop = threading.Event()
    started = time.monotonic()

    def beat() -> None:
        while not stop.wait(PROGRESS_SECONDS):
            say(f"{what}: still scrubbing ({time.monotonic() - started:,.0f} s)")

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _write(out: Any, batch: list[tuple[Any, str]], scrubber: Any) -> int:
    if not batch:
        return 0
    for (id_, _), (text, spans) in zip(batch, scrubber.settled_found([t for _, t in batch])):
        row = {"id": id_, "text": text,
               "spans": [{"start": s.start, "end": s.end, "kind": s.kind, "placeholder": s.placeholder} for s in spans]}
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(batch)
