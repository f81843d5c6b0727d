"""Terminal progress for long work: shards done, records processed and records per second."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TextIO


@dataclass
class Progress:
    """Counts finished shards of one step and prints one line per shard (skipped ones say so)."""

    step: str
    total: int
    stream: TextIO | None = None  # None: sys.stderr as it is when printing (tests swap it)
    done: int = 0
    skipped: int = 0
    records: int = 0
    started: float = field(default_factory=time.perf_counter)

    def update(self, records: int, skipped: bool = False, name: str = "") -> str:
        self.done += 1
        self.skipped += int(skipped)
        if not skipped:
            self.records += records
        line = self.line(name)
        print(line, file=self.stream or sys.stderr, flush=True)
        return line

    @property
    def rate(self) -> float:
        elapsed = time.perf_counter() - self.started
        return self.records / elapsed if elapsed > 0 else 0.0

    def line(self, name: str = "") -> str:
        skipped = f", {self.skipped} skipped (done before)" if self.skipped else ""
        return (f"[{self.step}] shards {self.done}/{self.total}{skipped}  records {self.records:,}  "
                f"{self.rate:,.0f} records/s  {name}").rstrip()
