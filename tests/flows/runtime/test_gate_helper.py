"""The gate's helper process (piece `gate_helper`) validates as this process does, is replaced by
this process when it dies, ends with its parent however the parent ends, and starts only for a
publishing build in the command's process, once per session."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from schemas.config import GateConfig
from tests.fresh_python import REPO, fresh_python
from tests.warehouse.test_gate import _ex, _good, _write
from flows.runtime import gate_helper
from warehouse.gate import run_gate

pytestmark = pytest.mark.slow  # a helper importing Great Expectations and the PII detectors (tests/conftest.py)

KINDS = ("email", "url")


@pytest.fixture
def helper():
    gate_helper.start(KINDS)
    yield gate_helper.helper_pid()
    gate_helper.stop()


def _files(tmp_path):
    bad = _good() + [_ex("x1", 0, "sad", text="I feel sad, mail me at jo@example.com"), _ex("p1", 0, "happy")]
    return {"train": _write(tmp_path / "train.parquet", bad)}


def _checks(result):
    return sorted((f["check"], f["unexpected_count"]) for f in result.summary["failures"])


def test_the_helper_finds_what_this_process_finds(tmp_path, helper):
    cfg = GateConfig(min_masks_for_distribution=0)
    here = run_gate(_files(tmp_path), cfg, tmp_path / "here", data_docs=False, pii_kinds=KINDS)
    there = gate_helper.run_gate(_files(tmp_path), cfg, tmp_path / "there", data_docs=False, pii_kinds=KINDS)
    assert helper != os.getpid() and not there.success
    assert _checks(there) == _checks(here) and ("no PII pattern left in text", 1) in _checks(there)
    assert there.results_path == tmp_path / "there" / "results.json" and there.results_path.exists()


def test_a_helper_that_died_is_said_and_the_gate_runs_here(tmp_path, helper, capsys):
    os.kill(helper, signal.SIGKILL)
    result = gate_helper.run_gate(_files(tmp_path), GateConfig(min_masks_for_distribution=0), tmp_path / "g",
                                   data_docs=False, pii_kinds=KINDS)
    assert "helper process ended unexpectedly; validating in this process" in capsys.readouterr().err
    assert ("no PII pattern left in text", 1) in _checks(result)
    assert gate_helper.helper_pid() is None  # the next build starts a new one


def _ended(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return True
    return state == "Z"  # ended, not yet reaped by whoever adopted it


@pytest.mark.parametrize("how", ["exit", "kill"])
def test_the_helper_ends_with_its_parent(how):
    code = ("import os, signal, sys\n"
            "from flows.runtime import gate_helper\n"
            "gate_helper.start(())\n"
            "print(gate_helper.helper_pid(), flush=True)\n"
            + ("os._exit(0)\n" if how == "exit" else "os.kill(os.getpid(), signal.SIGKILL)\n"))
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    pid = int(done.stdout.split()[0])
    deadline = time.monotonic() + 15
    while not _ended(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _ended(pid), f"helper {pid} outlived its parent"


def test_stopping_the_helper_waits_for_it_so_nothing_is_left_and_its_cpu_is_counted():
    code = ("import os, resource\n"
            "from flows.runtime import gate_helper\n"
            "gate_helper.start(())\n"
            "pid = gate_helper.helper_pid()\n"
            "before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime\n"
            "gate_helper.stop()\n"
            "after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime\n"
            "print(os.path.exists(f'/proc/{pid}'), after > before)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.stdout.split() == ["False", "True"], done.stdout + done.stderr


@pytest.mark.parametrize(("workers", "publish", "gate", "plain", "helper"),
                         [(0, True, True, "", True), (2, True, True, "", False), (0, False, True, "", False),
                          (0, True, False, "", False), (0, True, True, "gate_helper", False)])
def test_only_a_publishing_build_in_this_process_starts_the_helper_which_its_session_stops(
        workers, publish, gate, plain, helper):
    # on a cluster, the helper would sit beside the workers at their peak and take their CPU
    code = ("import sys\n"
            "from dataclasses import replace\n"
            "from pathlib import Path\n"
            "from flows import runtime\n"
            "from flows.runtime import gate_helper\n"
            "from pipeline.plan import BuildPlan\n"
            "from schemas.config import load_recipe\n"
            "recipe = load_recipe(None)\n"
            f"recipe = replace(recipe, gate=replace(recipe.gate, enabled={gate}))\n"
            f"plan = BuildPlan(Path('unused'), recipe, None, (), 1000, {workers}, publish={publish})\n"
            "with runtime.session(plan, temporary_api=False):\n"
            "    pid = gate_helper.helper_pid()\n"
            "print(pid is not None, gate_helper.helper_pid() is None, 'great_expectations' in sys.modules)")
    env = {**os.environ, "EXPRESS_PLAIN": plain}
    assert fresh_python(code, env=env, timeout=300).split() == [str(helper), "True", "False"]
