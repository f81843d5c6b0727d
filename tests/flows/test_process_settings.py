"""What a command sets before Prefect and pyarrow load reaches its own process and the worker
processes it starts (they inherit its environment)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_command_and_the_processes_it_starts_use_arrows_jemalloc_pool():
    code = ("from flows.cli import prefect_env; prefect_env.configure()\n"
            "import subprocess, sys, pyarrow\n"
            "child = 'import pyarrow; print(pyarrow.default_memory_pool().backend_name)'\n"
            "print(pyarrow.default_memory_pool().backend_name)\n"
            "print(subprocess.run([sys.executable, '-c', child], capture_output=True, text=True).stdout.strip())")
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["jemalloc", "jemalloc"]
    # without the setting, pyarrow's own default differs: the test would notice the setting gone
    plain = subprocess.run([sys.executable, "-c", "import pyarrow; print(pyarrow.default_memory_pool().backend_name)"],
                           env=env, capture_output=True, text=True, timeout=60)
    assert plain.stdout.strip() != "jemalloc"
