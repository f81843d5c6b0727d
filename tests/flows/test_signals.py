"""A build stopped as a terminal, a supervisor or the kernel stops it ends promptly and leaves no
process of its own behind: Ctrl-C (SIGINT to the whole process group) says `interrupted` and exits
130; SIGTERM (timeout, CI cancellation, docker stop, systemd) says `terminated` and exits 143;
the temporary Prefect API it started ends by itself once no command holds it (here at once:
EXPRESS_API_IDLE=0), also after `kill -9`. Real processes, the command leading its own process
group as in a terminal."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from tests.fresh_python import REPO, environ_without

pytestmark = pytest.mark.slow  # whole `express build` processes (tests/conftest.py)

HANG_GUARD = 120  # seconds: a process still there by then has been left behind


@pytest.fixture(scope="module")
def dump(tmp_path_factory):
    from sources.demo import DemoSpec, write_demo_dump

    return write_demo_dump(tmp_path_factory.mktemp("signals"), DemoSpec(posts=20_000))


def _running_build(dump, tmp_path, prefect_home):
    """`express build` past its split (its API up) and the processes it started."""
    env = environ_without("PREFECT_API", "EXPRESS_", PREFECT_HOME=str(prefect_home), EXPRESS_API_IDLE="0")
    proc = subprocess.Popen([sys.executable, "-m", "flows.cli", "build", "--input", str(dump), "--warehouse",
                             str(tmp_path / "wh"), "--workers", "0"], cwd=REPO, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if line.startswith("[split]"):
            break
    assert proc.poll() is None, "".join(seen)[-2000:]
    started = psutil.Process(proc.pid).children(recursive=True)
    assert any("uvicorn" in " ".join(p.cmdline()) for p in started), [p.cmdline() for p in started]
    return proc, started


def _gone(processes) -> bool:
    return all(not p.is_running() or p.status() == psutil.STATUS_ZOMBIE for p in processes)


@pytest.mark.parametrize(("how", "code", "said"), [("ctrl-c", 130, "interrupted"), ("sigterm", 143, "terminated"),
                                                   ("kill -9", -9, None)])
def test_a_stopped_build_ends_and_leaves_no_process_behind(dump, prefect_home, tmp_path, how, code, said):
    proc, started = _running_build(dump, tmp_path, prefect_home)
    if how == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)  # the terminal signals the foreground group, not one process
    else:
        proc.send_signal(signal.SIGTERM if how == "sigterm" else signal.SIGKILL)
    out = proc.communicate(timeout=HANG_GUARD)[0]
    assert proc.returncode == code, out[-2000:]
    if said:
        assert out.strip().splitlines()[-1] == f"express build: {said}", out[-2000:]
        assert "Traceback" not in out and "ConnectError" not in out
    deadline = time.monotonic() + HANG_GUARD
    while not _gone(started) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [" ".join(p.cmdline())[:80] for p in started if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    for p in started:
        if p.is_running():
            p.kill()
    assert not left, f"left behind: {left}"


STUCK = """
import sys, threading, time
from common import stopping
stopping.GRACE_SECONDS = 1.0
stopping.install()
stopping.named("build")
threading.Thread(target=time.sleep, args=(3600,)).start()  # a step the stop cannot reach, not a daemon
try:
    print("ready", flush=True)
    while True:
        time.sleep(0.05)
except BaseException:  # the stop arrives here
    if sys.argv[1] == "said":
        print("express build: terminated", file=sys.stderr, flush=True)
        stopping.said("express build: terminated")
# the thread keeps the process: without the guard it would wait an hour
"""


@pytest.mark.parametrize("printed", ["said", "silent"])
def test_a_stop_whose_clean_up_hangs_leaves_after_its_grace_with_the_stops_code_and_one_last_line(printed):
    proc = subprocess.Popen([sys.executable, "-c", STUCK, printed], cwd=REPO, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout.readline() == "ready\n"
    proc.send_signal(signal.SIGTERM)
    err = proc.communicate(timeout=HANG_GUARD)[1]
    assert proc.returncode == 143, err
    lines = err.strip().splitlines()
    assert lines[-1] == "express build: terminated"
    waited = "express build: still stopping after 1 s; left without waiting for its steps (a rerun resumes)"
    assert (waited in lines) == (printed == "silent") and len(lines) == (1 if printed == "said" else 2), err
