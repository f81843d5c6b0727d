"""The temporary Prefect API a command starts when none is configured (flows/process.py): one
server in a child process for the command and its local workers, reached over plain HTTP, and
flow runs under it that end without waiting for Prefect's heartbeat thread."""
import ssl
from pathlib import Path

import pytest

from tests.fresh_python import REPO, environ_without, fresh_python

pytestmark = pytest.mark.slow  # temporary Prefect servers in fresh interpreters (tests/conftest.py)

NO_API = ("PREFECT_API", "EXPRESS_TEMPORARY")  # no configured API, none inherited from a parent


def test_clients_of_the_temporary_api_load_one_root_certificate_and_still_reach_it(tmp_path):
    """The temporary API speaks plain HTTP; its clients get a CA file of one certificate instead
    of certifi's bundle (two bundle loads were ~90 ms of every task on a worker), and a build
    under it still talks to the API (a task run is recorded). Its server runs in a child process
    whose app is never imported by the process that started it (~80 MB there); the work given
    for its start-up runs once, while it starts."""
    code = ("import os, ssl; from flows.process import share_temporary_api\n"
            "seen = []; url = share_temporary_api(lambda: seen.append(os.environ.get('PREFECT_API_URL')))\n"
            "assert seen == [None], seen  # called once, while the server started (before its URL was exported)\n"
            "from prefect import flow, task; from prefect.client.orchestration import get_client\n"
            "@task\ndef one(): return 1\n"
            "@flow\ndef f(): return one.submit().result()\n"
            "f()\n"
            "import time; deadline = time.monotonic() + 30  # the server records task runs from events, a moment later\n"
            "with get_client(sync_client=True) as c:\n"
            "    while not (runs := c.read_task_runs()) and time.monotonic() < deadline: time.sleep(0.1)\n"
            "    assert c.read_block_types() == [], 'the temporary server registered block types'\n"
            "import sys; assert 'prefect.server.api.server' not in sys.modules, 'the server app was imported here'\n"
            "from prefect.settings import get_current_settings\n"
            "print(get_current_settings().flows.heartbeat_frequency)\n"
            "print(url.split(':')[0], os.environ['PREFECT_API_SSL_CERT_FILE'], len(runs))")
    out = fresh_python(code, env=environ_without(*NO_API, PREFECT_HOME=str(tmp_path)), timeout=180)
    heartbeat, scheme, ca_file, task_runs = out.split()[-4:]
    assert heartbeat == "None"  # flow runs under it end without waiting for a heartbeat thread
    assert scheme == "http" and int(task_runs) >= 1
    assert Path(ca_file).read_text().count("BEGIN CERTIFICATE") == 1
    assert len(ssl.create_default_context(cafile=ca_file).get_ca_certs()) == 1


def test_the_temporary_server_skips_block_registration_unless_the_user_asks_for_it(monkeypatch):
    """Checking whether to register block types imports every Prefect collection (prefect-dask:
    Dask's distributed) before the server answers; a user's own setting still wins."""
    from flows import process

    launched = []
    monkeypatch.setattr(process, "_LAUNCHED", [])
    monkeypatch.setattr(process.subprocess, "Popen", lambda cmd, env: launched.append(env) or object())
    monkeypatch.setattr(process.atexit, "register", lambda *a: None)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setenv("PREFECT_SERVER_REGISTER_BLOCKS_ON_START", "true")
    process.launch_temporary_api()
    (env,) = launched
    assert env["PREFECT_SERVER_REGISTER_BLOCKS_ON_START"] == "true"
    assert env["PREFECT_SERVER_MEMOIZE_BLOCK_AUTO_REGISTRATION"] == "false"


def test_a_configured_api_starts_no_server_and_runs_no_start_up_work(monkeypatch):
    from flows.process import TEMPORARY_API, share_temporary_api

    monkeypatch.delenv(TEMPORARY_API, raising=False)
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    calls = []
    assert share_temporary_api(lambda: calls.append(1)) is None
    assert calls == []


def test_heartbeats_stop_only_under_a_temporary_api_also_in_a_child_given_its_parents():
    """Prefect's heartbeat thread sleeps in 1 s steps and is joined when a flow run ends; the beats
    feed a lasting server's detection of crashed runs, so a user's API keeps them."""
    code = ("import os; from flows.process import TEMPORARY_API, share_temporary_api\n"
            "from prefect.settings import get_current_settings\n"
            "os.environ['PREFECT_API_URL'] = 'http://127.0.0.1:9/api'\n"
            "assert share_temporary_api() is None\n"
            "print(get_current_settings().flows.heartbeat_frequency)\n"
            "os.environ[TEMPORARY_API] = os.environ['PREFECT_API_URL']  # a parent's temporary API\n"
            "assert share_temporary_api() is None\n"
            "print(get_current_settings().flows.heartbeat_frequency)")
    users, parents = fresh_python(code, env=environ_without(*NO_API)).split()[-2:]
    assert users != "None" and int(users) > 0
    assert parents == "None"


def test_an_in_process_build_command_uses_the_temporary_api_without_loading_the_server_here(tmp_path):
    """`express build` of a small input (no workers) also starts the server in a child process;
    Prefect's own temporary server would load the server's code into the command's process."""
    from sources.demo import DemoSpec, write_demo_dump

    dump = write_demo_dump(tmp_path / "in", DemoSpec(posts=200))
    code = ("import os, sys; from flows.cli import main\n"
            f"code = main(['build', '--input', {str(dump)!r}, '--warehouse', {str(tmp_path / 'wh')!r}, "
            f"'--config', {str(REPO / 'configs' / 'demo.toml')!r}])\n"
            "from prefect.settings import get_current_settings\n"
            "print(code, 'prefect.server.api.server' in sys.modules, get_current_settings().flows.heartbeat_frequency,\n"
            "      os.environ.get('EXPRESS_TEMPORARY_API') == os.environ.get('PREFECT_API_URL') != None)")
    out = fresh_python(code, env=environ_without(*NO_API, PREFECT_HOME=str(tmp_path / "prefect")), timeout=300)
    assert out.split()[-4:] == ["0", "False", "None", "True"], out[-2000:]
    assert (tmp_path / "wh" / "express-demo" / "v1" / "manifest.json").exists()


def test_a_command_configured_without_flows_of_its_own_starts_no_temporary_api():
    """`express schedule` serves a lasting deployment: it keeps the user's server, so its
    `process.configure()` sets the process's defaults and starts no temporary API."""
    code = ("import os, sys; from flows import process; process.configure()\n"
            "print(os.environ.get('PREFECT_API_URL'), os.environ.get('EXPRESS_TEMPORARY_API'), 'prefect' in sys.modules,\n"
            "      os.environ['ARROW_DEFAULT_MEMORY_POOL'])")
    assert fresh_python(code, env=environ_without(*NO_API)).split() == ["None", "None", "False", "jemalloc"]


def test_the_temporary_api_asks_for_a_quick_retry_when_its_database_is_busy(tmp_path):
    """Prefect's server answers 503 while its event recorder holds SQLite, and its client then
    waits 2 s, 4 s, ...; the temporary API's answers ask for 50 ms (flows/api_server.py). Flow runs
    are created until the client has met a busy database at least once."""
    code = ("import logging, re; from flows.process import share_temporary_api\n"
            "share_temporary_api()\n"
            "waits = []\n"
            "class Seen(logging.Handler):\n"
            "    def emit(self, record):\n"
            "        m = re.search(r'status code 503\\. Another attempt will be made in ([0-9.]+)s', record.getMessage())\n"
            "        if m: waits.append(float(m.group(1)))\n"
            "from prefect import flow, task  # it sets up Prefect's logging: the handler comes after\n"
            "log = logging.getLogger('prefect.client'); log.addHandler(Seen()); log.setLevel(logging.DEBUG)\n"
            "@task\ndef one(i): return i\n"
            "@flow\ndef f():\n    for i in range(8): one(i)\n"
            "for _ in range(60):\n"
            "    f()\n"
            "    if waits: break\n"
            "print(len(waits), max(waits, default=-1))")
    out = fresh_python(code, env=environ_without(*NO_API, PREFECT_HOME=str(tmp_path)), timeout=300)
    retries, longest = out.split()[-2:]
    assert int(retries) >= 1, "no flow run met a busy database: the test proved nothing"
    assert float(longest) < 0.5
