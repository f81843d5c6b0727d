"""The Prefect API a command's flows report to (flows/prefect_api.py) and how the runtime tunes it
(flows/runtime/prefect_tuning.py): one temporary server in a child process for the command and its
local workers, reached over plain HTTP, serving Prefect's app through the quick-retry wrapper, and
flow runs under it that end without waiting for Prefect's heartbeat thread; a user's API is used
as it is."""

import os
import sys
from types import SimpleNamespace

import pytest

from tests.fresh_python import REPO, environ_without, fresh_python, run_until_idle

pytestmark = pytest.mark.slow  # temporary Prefect servers in fresh interpreters (tests/conftest.py)

NO_API = ("PREFECT_API", "EXPRESS_TEMPORARY", "EXPRESS_PLAIN")  # no configured API, none inherited from a parent


SESSION = """
import os, sys
from flows import runtime
with runtime.session() as wait_for_api:
    wait_for_api()
    from prefect import flow, task
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
    from prefect.settings import get_current_settings
    @task
    def one(): return 1
    @flow
    def f(): return one.submit().result()
    flow_run = f(return_state=True).state_details.flow_run_id
    import time; deadline = time.monotonic() + 30  # the server records task runs from events, a moment later
    with get_client(sync_client=True) as c:
        while not (runs := c.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run])))) \
                and time.monotonic() < deadline: time.sleep(0.1)
    heartbeat = get_current_settings().flows.heartbeat_frequency
print('prefect.server.api.server' in sys.modules, heartbeat, len(runs) >= 1)
print(os.environ['PREFECT_API_URL'].split(':')[0])
"""


def test_a_session_starts_one_temporary_api_in_a_child_which_its_flows_reach_tuned(prefect_home):
    """Its server's app is never imported by the command's process; it speaks plain HTTP; its flow
    runs send no heartbeats."""
    out = fresh_python(SESSION, env=environ_without(*NO_API, PREFECT_HOME=str(prefect_home)), timeout=180).split()
    assert out[-4:] == ["False", "None", "True", "http"]


def test_a_plain_session_still_gives_its_flows_a_temporary_api_untuned(prefect_home):
    """EXPRESS_PLAIN=1: the same API, with Prefect's own heartbeats."""
    env = environ_without(*NO_API, PREFECT_HOME=str(prefect_home), EXPRESS_PLAIN="1")
    server_here, heartbeat, recorded, scheme = fresh_python(SESSION, env=env, timeout=180).split()[-4:]
    assert (server_here, recorded, scheme) == ("False", "True", "http")
    assert heartbeat != "None" and int(heartbeat) > 0


def test_the_session_serves_the_quick_retry_app_unless_plain(monkeypatch, tmp_path):
    from flows import prefect_api
    from flows.runtime import prefect_tuning

    launched = []
    ended = SimpleNamespace(pid=0, poll=lambda: 0)  # a server that is gone at once
    monkeypatch.setattr(prefect_api.subprocess, "Popen", lambda cmd, env, **kw: launched.append(cmd) or ended)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    monkeypatch.delenv("EXPRESS_PLAIN", raising=False)
    prefect_api.Server(prefect_tuning.server_app()).stop()
    ((cmd),) = launched
    assert cmd[cmd.index("--factory") + 1] == "flows.runtime.retry_soon:create_app"
    monkeypatch.setenv("EXPRESS_PLAIN", "retry_soon")
    assert prefect_tuning.server_app() == prefect_api.APP


def test_a_command_joins_only_a_running_server_of_its_own_code(monkeypatch, tmp_path):
    """The record names the server's Python, checkout and installed Prefect: after an upgrade (or from
    another checkout) a command starts its own; a server that is gone is never joined."""
    from flows import prefect_api

    launched = []
    ended = SimpleNamespace(pid=0, poll=lambda: 0)
    monkeypatch.setattr(prefect_api.subprocess, "Popen", lambda cmd, env, **kw: launched.append(cmd) or ended)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    files = prefect_api.Files.of(prefect_api.APP)
    alive = files.hold(".alive")  # a server that runs: this process stands in for it
    try:
        ours, gone = prefect_api.served_code(), 2 ** 22 + 7  # above Linux's largest process number
        cases = [("another checkout", os.getpid(), False), (ours, gone, False), (ours, os.getpid(), True)]
        for code, pid, joined in cases:
            files.record("http://127.0.0.1:9/api", pid, code)
            before = len(launched)
            server = prefect_api.Server(prefect_api.APP)
            server.stop()
            assert (len(launched) == before) == joined, (code, pid)
            assert (server.url == "http://127.0.0.1:9/api") == joined
    finally:
        os.close(alive)


def test_a_server_that_does_not_start_is_one_error_naming_its_last_line():
    """What the server wrote stays out of the command's output, but says why it did not start."""
    from flows import prefect_api

    server = prefect_api.Server("flows.no_such_module:create_app")
    with pytest.raises(RuntimeError, match=r"did not start .*no_such_module.*set PREFECT_API_URL"):
        server.wait()


def test_both_server_apps_are_prefects_temporary_app():
    """What uvicorn's factories build: Prefect's app with its temporary-server options (public
    arguments, no private flags), wrapped by the quick-retry middleware when tuned."""
    code = ("from flows.prefect_api import create_app\n"
            "from flows.runtime.retry_soon import RetrySoon, create_app as tuned\n"
            "plain, wrapped = create_app(), tuned()\n"
            "print(type(plain).__name__, type(wrapped).__name__, type(wrapped.app).__name__)")
    assert fresh_python(code, timeout=180).split() == ["FastAPI", "RetrySoon", "FastAPI"]


def test_a_configured_api_starts_no_server(monkeypatch):
    from flows import prefect_api

    monkeypatch.delenv(prefect_api.TEMPORARY_API, raising=False)
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    monkeypatch.setattr(prefect_api, "Server", lambda *a: pytest.fail("a server was started"))
    assert prefect_api.ensure() is None and not prefect_api.is_temporary()


def test_heartbeats_stop_only_under_a_temporary_api_also_in_a_child_given_its_parents():
    """Prefect's heartbeat thread sleeps in 1 s steps and is joined when a flow run ends; the beats
    feed a lasting server's detection of crashed runs, so a user's API keeps them."""
    code = ("import os; from flows import runtime\n"
            "from prefect.settings import get_current_settings\n"
            "os.environ['PREFECT_API_URL'] = 'http://127.0.0.1:9/api'\n"
            "with runtime.session() as wait_for_api:\n"
            "    wait_for_api()\n"
            "    print(get_current_settings().flows.heartbeat_frequency)\n"
            "os.environ['EXPRESS_TEMPORARY_API'] = os.environ['PREFECT_API_URL']  # a parent's temporary API\n"
            "with runtime.session() as wait_for_api:\n"
            "    wait_for_api()\n"
            "    print(get_current_settings().flows.heartbeat_frequency)")
    users, parents = fresh_python(code, env=environ_without(*NO_API)).split()[-2:]
    assert users != "None" and int(users) > 0
    assert parents == "None"


def test_an_in_process_build_command_uses_the_temporary_api_and_its_rerun_prints_only_its_own_lines(tmp_path,
                                                                                                   prefect_home):
    """`express build` of a small input (no workers) starts the server in a child process (Prefect's
    own temporary server would load the server's code into the command's process). The same command
    again finds the build finished: its output is its progress lines and its result, with no
    traceback and nothing of the server's, which here logs as much as it can (a server stopped
    while it records events logs tracebacks, issue 65)."""
    from sources.demo import DemoSpec, write_demo_dump

    dump = write_demo_dump(tmp_path / "in", DemoSpec(posts=200))
    code = ("import os, sys; from flows.cli import main\n"
            f"argv = ['build', '--input', {str(dump)!r}, '--warehouse', {str(tmp_path / 'wh')!r}, "
            f"'--config', {str(REPO / 'configs' / 'demo.toml')!r}]\n"
            "code = main(argv)\n"
            "print(code, 'prefect.server.api.server' in sys.modules,\n"
            "      os.environ.get('EXPRESS_TEMPORARY_API') == os.environ.get('PREFECT_API_URL') != None)\n"
            "print('rerun', flush=True); print('rerun', file=sys.stderr, flush=True)\n"
            "print(main(argv))")
    env = environ_without(*NO_API, PREFECT_HOME=str(prefect_home), PREFECT_SERVER_LOGGING_LEVEL="DEBUG")
    done = run_until_idle([sys.executable, "-c", code], cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    out, rerun_out = done.stdout.split("rerun\n")
    assert out.split()[-3:] == ["0", "False", "True"], out[-2000:]
    assert (tmp_path / "wh" / "express-demo" / "v1" / "manifest.json").exists()
    rerun_err = done.stderr.split("rerun\n")[1]
    assert "skipped (done before)" in rerun_err and rerun_out.split()[-1] == "0"
    for line in filter(None, done.stderr.splitlines()):
        assert line.startswith("[") or line == "rerun", done.stderr[-3000:]  # progress lines only


USED = """
import json, os
from flows import prefect_api, runtime
with runtime.session() as wait_for_api:
    wait_for_api()
record = json.loads(prefect_api.Files.of(runtime.prefect_tuning.server_app()).path(".json").read_text())
print(os.environ['PREFECT_API_URL'], record['url'], record['pid'])
"""


def _gone(pid: int) -> bool:
    """The process ended within the guard (psutil waits; a zombie child of nobody here counts as ended)."""
    import psutil

    try:
        psutil.Process(pid).wait(timeout=120)
    except psutil.NoSuchProcess:
        pass
    except psutil.TimeoutExpired:
        return False
    return True


def test_the_next_command_on_a_prefect_home_joins_its_kept_temporary_api_which_ends_with_the_home(prefect_home):
    """EXPRESS_API_IDLE=600: the first command is gone, its server still answers, and the next
    command joins it (no second start to wait for). Its Prefect home removed (as a test session's is
    when it ends), it ends at once. (With EXPRESS_API_IDLE=0 it ends with its last command:
    tests/flows/test_signals.py.)"""
    import shutil

    import httpx
    import psutil

    env = environ_without(*NO_API, PREFECT_HOME=str(prefect_home), EXPRESS_API_IDLE="600")
    first = fresh_python(USED, env=env, timeout=180).split()
    pid = int(first[2])
    try:
        assert first[0] == first[1] and httpx.get(f"{first[0]}/health").status_code == 200
        assert fresh_python(USED, env=env, timeout=180).split() == first
        shutil.rmtree(prefect_home)
        assert _gone(pid), "the temporary API outlived its Prefect home"
    finally:
        if psutil.pid_exists(pid):
            psutil.Process(pid).kill()


def test_an_idle_time_that_is_no_number_of_seconds_is_the_commands_one_line_error(tmp_path):
    from sources.demo import DemoSpec, write_demo_dump

    dump = write_demo_dump(tmp_path / "in", DemoSpec(posts=20))
    env = environ_without(*NO_API, EXPRESS_API_IDLE="soon", PREFECT_HOME=str(tmp_path / "home"))
    done = run_until_idle([sys.executable, "-m", "flows.cli", "build", "--input", str(dump), "--warehouse",
                           str(tmp_path / "wh")], cwd=REPO, env=env)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "express build: nothing published: EXPRESS_API_IDLE=soon: not a number of seconds (0 or more; 0 ends "
        "the temporary Prefect API with its last command)"]
    assert not (tmp_path / "home" / "express-api.retry_soon.json").exists()

