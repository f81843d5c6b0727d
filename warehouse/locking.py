"""An exclusive file lock (fcntl.flock) so two publishers never write the same dataset at once."""
from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class LockTimeout(TimeoutError):
    """Another process held the lock for longer than we were willing to wait."""


@contextmanager
def file_lock(path: Path, timeout: float = 900.0, poll: float = 0.1) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing); released on exit, or when the process dies."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LockTimeout(f"{path}: still locked by another publisher after {timeout:.0f}s") from None
                time.sleep(poll)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
