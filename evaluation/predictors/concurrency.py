"""How many requests a chat server gets at once: `--concurrency N` when the user gives a number;
by default as many as the server has slots when it says so (llama.cpp's llama-server reports
`total_slots` at /props), else found by trying.

Without a slot count the window starts at one request and widens one step at a time while the
server gets through more tokens per second (tokens, not rows: rows differ in length); the first
step that brings no gain is taken back and the window stays there. A one-slot server
(llama-cpp-python's answers one request at a time) thus settles at one or two requests after a
few rows (a second one waiting keeps it from idling between answers), and a batching server
(vLLM) climbs to the cap of four. A timeout narrows the window to one request for the
rest of the run: a server that times out is saturated, and sending more in parallel would only
make it compute abandoned answers.
"""
from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

GAIN = 1.2  # a wider window must get through at least this many times the tokens per second to stay


AUTO_CAP = 4  # most requests in flight when the user names no number (--concurrency 0)


class AdaptiveWindow:
    """`concurrency` > 0 is the user's number, kept (but for timeouts); 0 adapts up to AUTO_CAP."""

    def __init__(self, concurrency: int = 0, slots: int | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.fixed = fixed = concurrency > 0
        self.cap = concurrency if fixed else AUTO_CAP
        self.slots = None if fixed else slots
        self.limit = self.cap if fixed else min(self.cap, slots) if slots else 1
        self.settled = fixed or bool(slots)
        self.in_flight = 0
        self.timeouts = 0
        self.history: list[int] = [self.limit]
        self._cond = threading.Condition()
        self._best = 0.0  # tokens/s at the previous width
        self._done = 0
        self._tokens = 0
        self._clock = clock
        self._since = clock()

    def __enter__(self) -> "AdaptiveWindow":
        with self._cond:
            while self.in_flight >= self.limit:
                self._cond.wait()
            self.in_flight += 1
        return self

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()

    @property
    def queue_factor(self) -> int:
        """Requests of ours a request may wait behind on the server: the window, beyond known slots."""
        return 1 if self.slots else self.limit

    def finished(self, tokens: int = 1) -> None:
        """A row was answered with `tokens` of prompt and answer: after a few rows at this width,
        widen or settle."""
        with self._cond:
            if self.settled:
                return
            self._done += 1
            self._tokens += max(1, tokens)
            if self._done < 4 * (self.limit + 1):  # enough rows to tell a gain from noise
                return
            rate = self._tokens / max(self._clock() - self._since, 1e-9)
            if rate > self._best * GAIN and self.limit < self.cap:
                self._best, self.limit = rate, self.limit + 1
            else:  # at the cap, or no faster than one step narrower: stay there
                self.limit -= rate <= self._best * GAIN and self.limit > 1
                self.settled = True
            self.history.append(self.limit)
            self._done, self._tokens, self._since = 0, 0, self._clock()
            self._cond.notify_all()

    def timed_out(self) -> None:
        with self._cond:
            self.timeouts += 1
            self.limit, self.settled = 1, True
            self.history.append(1)


def map_until_stopped(fn: Callable[[T], Any], items: Sequence[T], workers: int, stop: threading.Event) -> list[Any]:
    """`fn` over `items` on `workers` threads, results in order. Whatever ends the caller first (an
    error of one item, Ctrl-C, SIGTERM) sets `stop` and is raised at once: no item is begun after
    it, and a thread still waiting for a server is left to end by itself (a daemon: it never holds
    the process, where a thread pool's exit would wait for every request in flight)."""
    todo: queue.SimpleQueue[tuple[int, T]] = queue.SimpleQueue()
    for pair in enumerate(items):
        todo.put(pair)
    done: queue.SimpleQueue[tuple[int, bool, Any]] = queue.SimpleQueue()

    def work() -> None:
        while not stop.is_set():
            try:
                i, item = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((i, True, fn(item)))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                done.put((i, False, exc))

    for _ in range(min(workers, len(items))):
        threading.Thread(target=work, daemon=True).start()
    out: list[Any] = [None] * len(items)
    try:
        for _ in items:
            i, ok, value = done.get()
            if not ok:
                raise value
            out[i] = value
    except BaseException:
        stop.set()
        raise
    return out
