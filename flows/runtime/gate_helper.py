"""Piece `gate_helper`: where the quality gate runs, in a helper process started ahead of publishing.

A build whose steps run in one process validates its release at the very end, and importing
Great Expectations and loading the PII detectors are a good part of what it waits for there;
done in a thread beforehand, they compete with the steps for the interpreter. On a two-core
machine such a build leaves one core idle, so its session starts one helper process early, which
gets ready there while the steps run, and the gate then runs in it. A build on a cluster
validates in the calling process (the helper would hold its memory beside the workers).

The helper is a plain child interpreter fed over a socket pair (multiprocessing's Connection:
framed pickles), not a multiprocessing pool: a pool's spawned child re-runs the caller's main
script, and a script without a `__main__` guard would then build again. The helper ends when
its end of the socket closes, so it never outlives its parent, however the parent ends.
"""
from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import threading
import traceback
from multiprocessing.connection import Connection
from typing import Any

from warehouse.gate_result import GateResult

_LOCK = threading.Lock()  # one request at a time; the helper answers them in order


class _Helper:
    def __init__(self, kinds: tuple[str, ...]):
        ours, theirs = socket.socketpair()
        args = [str(theirs.fileno()), ",".join(kinds)]
        code = f"from {__name__} import serve; serve()"
        self.proc = subprocess.Popen([sys.executable, "-c", code, *args], pass_fds=[theirs.fileno()])
        theirs.close()
        self.conn = Connection(ours.detach())

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[bool, Any, str]:
        """(ok, the value or the exception raised, its traceback)."""
        self.conn.send((name, args, kwargs))
        return self.conn.recv()

    def close(self, now: bool = False) -> None:
        """End the helper: it reads the end of its input and exits, and is waited for (so no
        process is left behind, and its CPU counts among this process's children); `now` kills
        it first, for a helper busy with a request nobody will read."""
        if now:
            self.proc.kill()
        self.conn.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_HELPER: list[_Helper] = []  # at most one per process, reused by every later gate


def start(kinds: tuple[str, ...]) -> None:
    """Start this process's gate helper, unless it runs: it imports the gate and loads the PII
    detectors for `kinds` (privacy/kinds.py) at once, then validates what it is sent."""
    with _LOCK:
        if not _HELPER:
            _HELPER.append(_Helper(tuple(kinds)))


def helper_pid() -> int | None:
    """The helper's process id, once it is ready (None without a helper)."""
    with _LOCK:
        return _answer(_HELPER[0].call("pid")) if _HELPER else None


def stop() -> None:
    """Stop the helper, if any (the next `start` begins a new one)."""
    with _LOCK:
        while _HELPER:
            _HELPER.pop().close()


atexit.register(stop)


def run_gate(*args: Any, **kwargs: Any) -> GateResult:
    """warehouse.gate.run_gate, in the helper when one was started (a helper that died is said
    and replaced by this process), else here."""
    with _LOCK:
        if _HELPER:
            try:
                reply = _HELPER[0].call("gate", *args, **kwargs)
            except (EOFError, OSError):
                print("[gate]    the gate's helper process ended unexpectedly; validating in this process",
                      file=sys.stderr, flush=True)
                _HELPER.pop().close()
            except BaseException:  # interrupted mid-request: its answer would reach the next one
                _HELPER.pop().close(now=True)
                raise
            else:
                return _answer(reply)
    return _validate(*args, **kwargs)


def _answer(reply: tuple[bool, Any, str]) -> Any:
    ok, value, where = reply
    if ok:
        return value
    value.add_note(f"(raised in the gate's helper process)\n{where}")
    raise value


def _validate(*args: Any, **kwargs: Any) -> GateResult:
    """The gate, in this process, with its libraries loaded as the runtime says."""
    from flows.runtime.models import import_gx, loading

    with loading():
        import_gx()
        from warehouse.gate import run_gate as validate  # imported where it runs: a helper's caller never does

        return validate(*args, **kwargs)


def _warm(kinds: tuple[str, ...]) -> None:
    """Load the PII detectors the gate checks `kinds` with (its name check needs the whole
    scrubber), then import the gate; a failure resurfaces when the gate runs."""
    from flows.runtime.models import import_gx, loading

    try:
        with loading():
            if kinds:
                from privacy.scrubber import cached_scrubber

                # a first find loads what the detectors load lazily (spaCy's first batch, compiled patterns)
                cached_scrubber(kinds).find_many(["Then Anna Berg wrote to anna.berg@example.org about it."])
            import_gx()
            import warehouse.gate  # noqa: F401
    except Exception:  # noqa: BLE001
        pass


_REQUESTS = {"gate": _validate, "pid": os.getpid}


def serve() -> None:
    """The helper's main loop (argv: socket fd, kinds): it collects cycles as its parent does,
    leaves Ctrl-C to the parent, and exits as the runtime says."""
    from flows.runtime.collector import collect_less, exit_quickly

    fd, kinds = sys.argv[1:3]  # -c: argv[0] is "-c"
    collect_less()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    conn = Connection(int(fd))
    _warm(tuple(k for k in kinds.split(",") if k))
    while True:
        try:
            name, args, kwargs = conn.recv()
        except (EOFError, OSError):  # the parent closed its end, or is gone
            break
        try:
            reply = (True, _REQUESTS[name](*args, **kwargs), "")
        except Exception as exc:  # noqa: BLE001 - the caller raises it
            reply = (False, exc, traceback.format_exc())
        try:
            conn.send(reply)
        except Exception as exc:  # noqa: BLE001 - an exception that does not pickle
            conn.send((False, RuntimeError(f"{type(exc).__name__}: {exc}"), reply[2]))
    exit_quickly()
