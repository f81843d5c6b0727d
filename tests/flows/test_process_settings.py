"""What a command sets before Prefect and pyarrow load reaches its own process and the worker
processes it starts (they inherit its environment)."""
from __future__ import annotations

from tests.fresh_python import environ_without, fresh_python


def test_a_command_and_the_processes_it_starts_use_arrows_jemalloc_pool():
    code = ("from flows import process; process.configure()\n"
            "import subprocess, sys, pyarrow\n"
            "child = 'import pyarrow; print(pyarrow.default_memory_pool().backend_name)'\n"
            "print(pyarrow.default_memory_pool().backend_name)\n"
            "print(subprocess.run([sys.executable, '-c', child], capture_output=True, text=True).stdout.strip())")
    env = environ_without("ARROW_DEFAULT_MEMORY_POOL")
    assert fresh_python(code, env=env).split() == ["jemalloc", "jemalloc"]
    # without the setting, pyarrow's own default differs: the test would notice the setting gone
    assert fresh_python("import pyarrow; print(pyarrow.default_memory_pool().backend_name)", env=env).strip() != "jemalloc"
