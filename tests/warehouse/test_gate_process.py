"""The gate's helper process validates as this process does, is replaced by this process when it
dies, and ends with its parent however the parent ends."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from schemas.config import GateConfig
from tests.fresh_python import REPO
from tests.warehouse.test_gate import _ex, _good, _write
from warehouse import gate_process
from warehouse.gate import run_gate

pytestmark = pytest.mark.slow  # a helper importing Great Expectations and the PII detectors (tests/conftest.py)

KINDS = ("email", "url")


@pytest.fixture
def helper():
    gate_process.start(KINDS)
    yield gate_process.helper_pid()
    gate_process.stop()


def _files(tmp_path):
    bad = _good() + [_ex("x1", 0, "sad", text="I feel sad, mail me at jo@example.com"), _ex("p1", 0, "happy")]
    return {"train": _write(tmp_path / "train.parquet", bad)}


def _checks(result):
    return sorted((f["check"], f["unexpected_count"]) for f in result.summary["failures"])


def test_the_helper_finds_what_this_process_finds(tmp_path, helper):
    cfg = GateConfig(min_masks_for_distribution=0)
    here = run_gate(_files(tmp_path), cfg, tmp_path / "here", data_docs=False, pii_kinds=KINDS)
    there = gate_process.run_gate(_files(tmp_path), cfg, tmp_path / "there", data_docs=False, pii_kinds=KINDS)
    assert helper != os.getpid() and not there.success
    assert _checks(there) == _checks(here) and ("no PII pattern left in text", 1) in _checks(there)
    assert there.results_path == tmp_path / "there" / "results.json" and there.results_path.exists()


def test_a_helper_that_died_is_said_and_the_gate_runs_here(tmp_path, helper, capsys):
    os.kill(helper, signal.SIGKILL)
    result = gate_process.run_gate(_files(tmp_path), GateConfig(min_masks_for_distribution=0), tmp_path / "g",
                                   data_docs=False, pii_kinds=KINDS)
    assert "helper process ended unexpectedly; validating in this process" in capsys.readouterr().err
    assert ("no PII pattern left in text", 1) in _checks(result)
    assert gate_process.helper_pid() is None  # the next build starts a new one


def _ended(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return True
    return state == "Z"  # ended, not yet reaped by whoever adopted it


@pytest.mark.parametrize("how", ["exit", "kill"])
def test_the_helper_ends_with_its_parent(how):
    code = ("import os, signal, sys\n"
            "from warehouse import gate_process\n"
            "gate_process.start(())\n"
            "print(gate_process.helper_pid(), flush=True)\n"
            + ("os._exit(0)\n" if how == "exit" else "os.kill(os.getpid(), signal.SIGKILL)\n"))
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    pid = int(done.stdout.split()[0])
    deadline = time.monotonic() + 15
    while not _ended(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _ended(pid), f"helper {pid} outlived its parent"


def test_stopping_the_helper_waits_for_it_so_nothing_is_left_and_its_cpu_is_counted():
    code = ("import os, resource\n"
            "from warehouse import gate_process\n"
            "gate_process.start(())\n"
            "pid = gate_process.helper_pid()\n"
            "before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime\n"
            "gate_process.stop()\n"
            "after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime\n"
            "print(os.path.exists(f'/proc/{pid}'), after > before)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.stdout.split() == ["False", "True"], done.stdout + done.stderr
