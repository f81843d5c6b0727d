"""Python code run in a fresh interpreter from the repository root, for what only a new process
shows: which modules an import loads, process-wide settings, start-up work."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent


def fresh_python(code: str, *args: str, env: dict[str, str] | None = None, timeout: float = 120) -> str:
    """Its standard output; the test fails with the end of its standard error if it exits non-zero."""
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


KEPT = ("EXPRESS_API_IDLE",)  # the tests' temporary APIs end with their last command (tests/conftest.py)


def environ_without(*prefixes: str, **extra: str) -> dict[str, str]:
    """This process's environment without the variables starting with `prefixes` (but those KEPT),
    plus `extra`."""
    return {k: v for k, v in os.environ.items() if k in KEPT or not k.startswith(prefixes)} | extra


class Hung(AssertionError):
    """A child process that used no CPU for its whole idle limit: waiting on nothing, not slow."""


def run_until_idle(args: list[str], idle_seconds: float = 300, poll: float = 2.0,
                   **popen: object) -> subprocess.CompletedProcess:
    """subprocess.run(args, capture_output=True, text=True) with a guard against a hang that a busy
    machine cannot trip: the child is killed only once it and its children have used no CPU for
    `idle_seconds` (a slow child under load still gets some every second; a hung one gets none)."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)
    watched = psutil.Process(proc.pid)
    used, since = -1.0, time.monotonic()
    while True:
        try:
            out, err = proc.communicate(timeout=poll)
            return subprocess.CompletedProcess(args, proc.returncode, out, err)
        except subprocess.TimeoutExpired:
            now_used = _cpu_seconds(watched)
            if now_used > used:
                used, since = now_used, time.monotonic()
            elif time.monotonic() - since >= idle_seconds:
                proc.kill()
                out, err = proc.communicate()
                raise Hung(f"{args[0]} used no CPU for {idle_seconds:g} s and was killed; its stderr ends:\n"
                           f"{err[-3000:]}") from None


def _cpu_seconds(process: psutil.Process) -> float:
    """CPU seconds (user and system) of the process and of every child it has."""
    total = 0.0
    for p in (process, *process.children(recursive=True)):
        try:
            t = p.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
        except psutil.NoSuchProcess:
            continue
    return total
