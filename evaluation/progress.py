"""Progress of a run on stderr: rows done, rows/s and the time left, at most every few seconds."""
from __future__ import annotations

import sys
import threading
import time
from typing import TextIO


def _clock(seconds: float) -> str:
    m, s = divmod(int(seconds + 0.5), 60)
    return f"{m}m{s:02d}s" if m else f"{s}s"


class Progress:
    def __init__(self, total: int, label: str = "evaluate", every: float = 10.0, stream: TextIO | None = None) -> None:
        self.total, self.label, self.every = total, label, every
        self.stream = stream or sys.stderr
        self.done = 0
        self.started = time.monotonic()
        self._shown = self.started
        self._lock = threading.Lock()

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started

    @property
    def rate(self) -> float:
        return self.done / self.seconds if self.seconds > 0 else 0.0

    def tick(self, n: int = 1) -> None:
        with self._lock:
            self.done += n
            self._maybe_show()

    def reach(self, done: int) -> None:
        """At least `done` rows are finished (the runner's count after each batch)."""
        with self._lock:
            self.done = max(self.done, done)
            self._maybe_show()

    def _maybe_show(self) -> None:
        now = time.monotonic()
        if now - self._shown >= self.every and self.done < self.total:
            self._shown = now
            left = (self.total - self.done) / self.rate if self.rate else 0.0
            print(f"[{self.label}] {self.done}/{self.total} rows  {self.rate:.2f} rows/s  ETA {_clock(left)}",
                  file=self.stream, flush=True)

    def close(self) -> None:
        print(f"[{self.label}] {self.done} rows in {_clock(self.seconds)}  {self.rate:.2f} rows/s",
              file=self.stream, flush=True)
