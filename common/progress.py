"""Progress of long work on stderr, one line at a time: a build's steps count shards (a line per
shard, with the records they held and the rate), an evaluation and a probe count rows (a line at
most every `every` seconds, with the rate and the time left, and one when they end)."""
from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TextIO


def _clock(seconds: float) -> str:
    m, s = divmod(int(seconds + 0.5), 60)
    return f"{m}m{s:02d}s" if m else f"{s}s"


@dataclass
class Progress:
    label: str
    total: int
    unit: str = "rows"  # what `total` counts: "rows", or "shards" (whose records are counted apart)
    every: float = 10.0  # seconds between lines; 0: a line each time a unit is done
    stream: TextIO | None = None  # None: sys.stderr as it is when printing (tests swap it)
    done: int = 0
    skipped: int = 0  # shards finished before (a resumed build)
    records: int = 0
    started: float = field(default_factory=time.perf_counter)
    _shown: float = field(default=0.0, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.started

    @property
    def rate(self) -> float:
        """Records (shards) or rows (rows) a second."""
        return (self.records if self.unit == "shards" else self.done) / self.seconds if self.seconds > 0 else 0.0

    def tick(self, n: int = 1) -> None:
        with self._lock:
            self.done += n
            self._maybe_show()

    def reach(self, done: int) -> None:
        """At least `done` rows are finished (the runner's count after each batch)."""
        with self._lock:
            self.done = max(self.done, done)
            self._maybe_show()

    def update(self, records: int, skipped: bool = False, name: str = "") -> str:
        """A shard is done (`skipped`: it was done before); prints and returns its line."""
        self.done += 1
        self.skipped += int(skipped)
        self.records += 0 if skipped else records
        line = self.line(name)
        print(line, file=self.stream or sys.stderr, flush=True)
        return line

    def line(self, name: str = "") -> str:
        if self.unit == "shards":
            skipped = f", {self.skipped} skipped (done before)" if self.skipped else ""
            return (f"[{self.label}] shards {self.done}/{self.total}{skipped}  records {self.records:,}  "
                    f"{self.rate:,.0f} records/s  {name}").rstrip()
        left = (self.total - self.done) / self.rate if self.rate else 0.0
        return f"[{self.label}] {self.done}/{self.total} rows  {self.rate:.2f} rows/s  ETA {_clock(left)}"

    def _maybe_show(self) -> None:
        now = time.perf_counter()
        if now - (self._shown or self.started) >= self.every and self.done < self.total:
            self._shown = now
            print(self.line(), file=self.stream or sys.stderr, flush=True)

    def close(self) -> None:
        print(f"[{self.label}] {self.done} rows in {_clock(self.seconds)}  {self.rate:.2f} rows/s",
              file=self.stream or sys.stderr, flush=True)
