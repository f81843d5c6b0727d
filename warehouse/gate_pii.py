"""The gate's PII check: the scrubber's own detectors (filters/pii.py) over the released texts.

The suite (schemas/expectations/examples.json) expects the computed columns pii_in_text and
pii_in_masked_text to be null; here they are filled with what the detectors still find
('EMAIL: jo@example.com; ...'). Structured kinds are cheap and run on every row; names (NER) run
on the `text` of a deterministic sample of at most `names_sample_rows` rows (pii.json), chosen by
a hash of the example id, so the gate's NER time is bounded whatever the release size.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import subprocess
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from filters.pii import KINDS, KIND_OF, STRUCTURED_KINDS, Found, cached_scrubber

# A release of at least this many examples has its structured scan run in a helper process, one
# chunk ahead of GX (which validates the chunk before while the helper scans): the helper takes
# ~2 s to start (imports and detectors), the scan of ~25,000 rows. Publishing runs after the
# build's workers are gone, so the helper has a core of its own.
HELPER_MIN_ROWS = 20_000
_REPO = Path(__file__).resolve().parents[1]


def _described(text: str, spans: list[Found]) -> str:
    return "; ".join(f"{s.kind.upper()}: {text[s.start:s.end]}" for s in spans)


class PiiHelperError(RuntimeError):
    """The helper process failed or exited: the gate cannot vouch for the release."""


class _Helper:
    """`python -m warehouse.gate_pii`: a process of its own (no multiprocessing, which would run the
    caller's main script again), fed pickled batches of texts over a pipe by one thread here, so
    the gate's own thread never blocks on it."""

    def __init__(self, kinds: tuple[str, ...]):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(_REPO), os.environ.get("PYTHONPATH")]))}
        self.proc = subprocess.Popen([sys.executable, "-m", "warehouse.gate_pii"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env)
        self.io = ThreadPoolExecutor(1, thread_name_prefix="gate-pii-helper")
        self.submit("start", kinds)  # it loads its detectors now, while the gate reads its first chunk

    def submit(self, kind: str, payload: Any) -> Future:
        return self.io.submit(self._call, kind, payload)

    def _call(self, kind: str, payload: Any) -> Any:
        try:
            pickle.dump((kind, payload), self.proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self.proc.stdin.flush()
            status, value = pickle.load(self.proc.stdout)
        except (EOFError, OSError, pickle.UnpicklingError) as exc:
            raise PiiHelperError(f"the gate's PII helper process stopped (exit code {self.proc.poll()}): {exc}") from exc
        if status != "ok":
            raise PiiHelperError(f"the gate's PII helper process failed: {value}")
        return value

    def close(self) -> None:
        self.io.shutdown(cancel_futures=True)
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


def _serve() -> None:
    """The helper's side: ("start", kinds) builds the scrubber, ("scan", Arrow IPC stream of the
    checked columns) answers with the structured spans of each column's texts; answers are
    ("ok", value) or ("error", message)."""
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever the libraries print goes to stderr, not into the answers
    requests, scrubber = sys.stdin.buffer, None
    while True:
        try:
            kind, payload = pickle.load(requests)
        except EOFError:
            return
        try:
            if kind == "start":
                scrubber, value = cached_scrubber(tuple(payload)), None
            else:
                table = pa.ipc.open_stream(pa.py_buffer(payload)).read_all()
                value = [scrubber.find_many([t or "" for t in table.column(c).to_pylist()], names=False)
                         for c in table.column_names]
            answer = ("ok", value)
        except Exception as exc:  # noqa: BLE001 - reported to the gate, which fails with it
            answer = ("error", f"{type(exc).__name__}: {exc}")
        pickle.dump(answer, answers, protocol=pickle.HIGHEST_PROTOCOL)
        answers.flush()


class _Scan:
    """The structured PII of one chunk's checked columns (spans per text): found now, or coming
    from the helper."""

    def __init__(self, found: list[list[list[Found]]] | None = None, future: Future | None = None):
        self._found, self._future = found, future

    def result(self) -> list[list[list[Found]]]:
        if self._found is None:
            self._found = self._future.result()
        return self._found


def _texts(values: pd.Series) -> list[str]:
    return [t if isinstance(t, str) else "" for t in values]


def _arrow_stream(frame: pd.DataFrame, columns: list[str]) -> pickle.PickleBuffer:
    """The columns as an Arrow IPC stream: the texts stay in Arrow buffers on this side (the frame's
    are Arrow-backed), no Python string per row."""
    table = pa.table({c: pa.array(frame[c]) for c in columns})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return pickle.PickleBuffer(sink.getvalue())


class GatePii:
    def __init__(self, spec: dict[str, Any], kinds: tuple[str, ...] | None, files: dict[str, Path],
                 helper_min_rows: int = HELPER_MIN_ROWS) -> None:
        self.spec = spec
        self.kinds = tuple(KINDS if kinds is None else kinds)
        self.scrubber = cached_scrubber(self.kinds) if self.kinds else None
        rows = sum(pq.ParquetFile(p).metadata.num_rows for p in files.values())
        self.share = min(1.0, spec["names_sample_rows"] / rows) if rows else 1.0
        self.rows = self.name_rows = self.chunks = 0
        self.seconds = 0.0
        structured = tuple(k for k in self.kinds if k in STRUCTURED_KINDS)
        self.helper = None
        if structured and rows >= helper_min_rows:
            self.helper = _Helper(structured)
        self.helper_used = self.helper is not None

    def scan(self, frame: pd.DataFrame) -> _Scan:
        """Start the structured scan of a chunk's checked columns: in the helper, except the first
        chunk (scanned here while the helper starts) and when there is no helper."""
        t0 = time.perf_counter()
        columns = self.spec["columns"]
        self.chunks += 1
        if self.scrubber is None:
            scan = _Scan([[[] for _ in range(len(frame))] for _ in columns])
        elif self.helper is None or self.chunks == 1:
            scan = _Scan([self.scrubber.find_many(_texts(frame[c]), names=False) for c in columns])
        else:
            scan = _Scan(future=self.helper.submit("scan", _arrow_stream(frame, columns)))
        self.seconds += time.perf_counter() - t0
        return scan

    def close(self) -> None:
        if self.helper is not None:
            self.helper.close()
            self.helper = None

    def _sampled(self, post_id: Any, segment_index: Any) -> bool:
        digest = hashlib.blake2b(f"{post_id}\0{segment_index}".encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big") / 2**64 < self.share

    def add_columns(self, frame: pd.DataFrame, scan: _Scan | None = None) -> pd.DataFrame:
        """frame with one pii_in_<column> per checked column: the PII found, or None. `scan` is the
        frame's structured scan begun earlier (`scan(frame)`); without it, it is done now."""
        scan = scan or self.scan(frame)
        t0 = time.perf_counter()  # here: waiting for the helper, names, the columns
        for column, found in zip(self.spec["columns"], scan.result()):
            values = frame[column]
            if self.scrubber is not None and self.scrubber.names is not None and column == self.spec["names_column"]:
                picked = [i for i, (p, s) in enumerate(zip(frame["post_id"], frame["segment_index"])) if self._sampled(p, s)]
                for i, people in zip(picked, self.scrubber.names.find_many(_texts(values.iloc[picked]))):
                    found[i] += [Found(KIND_OF[r.entity_type], r.entity_type, r.start, r.end) for r in people]
                self.name_rows += len(picked)
            frame[f"pii_in_{column}"] = pd.Series(
                [_described(values.iloc[i], spans) if spans else None for i, spans in enumerate(found)],
                index=frame.index, dtype="object")
        self.rows += len(frame)
        self.seconds += time.perf_counter() - t0
        return frame

    def describe(self) -> dict[str, Any]:
        return {"check": self.spec["name"], "version": self.spec["version"], "sha256": self.spec.get("sha256"),
                "kinds": list(self.kinds), "columns": self.spec["columns"], "rows_checked": self.rows,
                "names_sample_rows": self.spec["names_sample_rows"], "rows_name_checked": self.name_rows,
                "seconds": round(self.seconds, 3), "helper_process": self.helper_used,
                "detectors": self.scrubber.describe() if self.scrubber else None}


if __name__ == "__main__":
    _serve()
