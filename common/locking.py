"""An exclusive file lock (fcntl.flock) so two publishers never write the same dataset at once,
and two builds never work on the same run (or two rebuilds on the same dataset)."""
from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from common.errors import UserError


class LockTimeout(UserError, TimeoutError):
    """Another process held the lock for longer than we were willing to wait."""


@contextmanager
def file_lock(path: Path, timeout: float = 900.0, poll: float = 0.1, holder: str = "another publisher") -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing); released on exit, or when the process
    dies (so a kill -9 never leaves it stale). `timeout=0` fails at once when it is held."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockTimeout(f"{path}: held by {holder} (pid {_holder_pid(path)})"
                                      + (f" for more than {timeout:.0f}s" if timeout else "")) from None
                time.sleep(poll)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def _holder_pid(path: Path) -> str:
    """The pid the lock's holder wrote into it (for the error message), or '?'."""
    try:
        return path.read_text().strip() or "?"
    except OSError:
        return "?"
