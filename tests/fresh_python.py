"""Python code run in a fresh interpreter from the repository root, for what only a new process
shows: which modules an import loads, process-wide settings, start-up work."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def fresh_python(code: str, *args: str, env: dict[str, str] | None = None, timeout: float = 120) -> str:
    """Its standard output; the test fails with the end of its standard error if it exits non-zero."""
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def environ_without(*prefixes: str, **extra: str) -> dict[str, str]:
    """This process's environment without the variables starting with `prefixes`, plus `extra`."""
    return {k: v for k, v in os.environ.items() if not k.startswith(prefixes)} | extra
