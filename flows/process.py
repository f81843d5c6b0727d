"""How an `express` process is tuned: environment defaults set before Prefect, pyarrow or the
models are imported (and inherited by the Dask workers it spawns), the one temporary Prefect API of
a command's flow runs, the Dask settings of local workers, the gate's helper process of a build
in this process, and a quick exit. Each setting was measured; the figures are in
bench/README.md ("Process tuning"), not here.
"""
from __future__ import annotations

import atexit
import gc
import hashlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any
from pathlib import Path

# Nothing reaches out at run time unless the user asks for a live client (praw, a chat server).
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "GX_ANALYTICS_ENABLED": "false"}
DEFAULTS = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    # pyarrow's default pool (mimalloc) keeps what a build's Parquet reads and writes freed
    "ARROW_DEFAULT_MEMORY_POOL": "jemalloc",
}
# Prefect's flow and task run loggers report a failure with its traceback at ERROR level; the
# command prints the reason in one line instead (unless --debug).
QUIET_RUN_LOGS = {"PREFECT_LOGGING_LOGGERS_PREFECT_FLOW_RUNS_LEVEL": "CRITICAL",
                  "PREFECT_LOGGING_LOGGERS_PREFECT_TASK_RUNS_LEVEL": "CRITICAL"}
TEMPORARY_API = "EXPRESS_TEMPORARY_API"  # the URL of the temporary API this process or a parent started
# The temporary API's server registers no block types as it starts: to check whether it must, it
# imports every installed Prefect collection (prefect-dask, so Dask's distributed) before it
# answers, and a build stores no blocks. A server of the user's still registers them.
TEMPORARY_SERVER = {"PREFECT_SERVER_REGISTER_BLOCKS_ON_START": "false",
                    "PREFECT_SERVER_MEMOIZE_BLOCK_AUTO_REGISTRATION": "false"}

# Dask's defaults for the local workers it spawns, changed:
# - MALLOC_TRIM_THRESHOLD_ (Dask sets it so workers hand freed memory back at once) makes glibc
#   return and re-fault spaCy's per-batch arrays; unset, glibc's adaptive threshold applies, and
#   peak RSS is still bounded by the shard (bench/scale.py measures it).
# - the statistical profiler samples every thread's stack, holding the GIL.
# - the event-loop tick, memory monitors and system monitor run in every worker and, for the
#   scheduler and nannies, in the flow process: CPU the workers want on a small machine. The tick
#   only feeds diagnostics; memory limits are still enforced, within a second.
# - each worker collects cycles as the command does (collect_less, through a preload module).
LOCAL_WORKER_CONFIG = {"distributed.worker.preload": ["flows.worker_start"],
                       "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
                       "distributed.worker.profile.enabled": False,
                       "distributed.admin.tick.interval": "1s",
                       "distributed.worker.memory.monitor-interval": "1s",
                       "distributed.admin.system-monitor.interval": "2s"}


# Python's cycle collector runs after every 700 net new objects and rescans the old ones at
# intervals; a process importing what a build imports creates half a million objects that live as
# long as it does, and those rescans were a fifth of its import time. A young generation of 10,000
# objects leaves the rest of the schedule as it was.
GC_THRESHOLDS = (10_000, 10, 10)


def collect_less() -> None:
    """Collect cycles less often in this process (GC_THRESHOLDS): called at a command's start, and
    by each local Dask worker as it starts (flows/worker_start.py)."""
    gc.set_threshold(*GC_THRESHOLDS)


def set_defaults(quiet_runs: bool = False) -> None:
    """The environment every command starts from (a variable already set wins); `quiet_runs`
    leaves failures to the command's one-line message."""
    for key, value in {**OFFLINE, **DEFAULTS}.items():
        os.environ.setdefault(key, value)
    if quiet_runs:
        os.environ.update(QUIET_RUN_LOGS)


def configure(temporary_api: bool = False, while_starting: Callable[[], object] | None = None) -> None:
    """Before a command's first flow: the defaults, and with `temporary_api` (the command runs
    flows) the temporary Prefect API when none is configured, calling `while_starting` meanwhile.
    A command serving a lasting deployment (`express schedule`) keeps the user's server instead."""
    set_defaults()
    if temporary_api:
        share_temporary_api(while_starting)


_LAUNCHED: list[tuple[subprocess.Popen[bytes], int]] = []  # the temporary API server this process launched


def launch_temporary_api() -> None:
    """Launch the temporary API's server now, without waiting for it, unless an API is configured
    in the environment: a command calls this first, so the server starts while the command checks
    its arguments and imports what it needs; `configure(temporary_api=True)` then waits for it."""
    if _LAUNCHED or os.environ.get("PREFECT_API_URL"):
        return
    from importlib.util import find_spec

    env = {**TEMPORARY_SERVER, **os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1",
           "PREFECT__SERVER_FINAL": "1"}
    with socket.socket() as sock:  # a port the system says is free
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    repo = Path(find_spec("flows").origin).parents[1]  # where flows/api_server.py is, without importing it
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "--app-dir", str(repo),
                             "--factory", "flows.api_server:create_app", "--host", "127.0.0.1",
                             "--port", str(port), "--log-level", "error", "--lifespan", "on"], env=env)
    atexit.register(_stop, proc)
    _LAUNCHED.append((proc, port))


def share_temporary_api(while_starting: Callable[[], object] | None = None) -> str | None:
    """Without a configured API (`PREFECT_API_URL`), Prefect starts a temporary server per process
    from that process (loading the server's code there), so every Dask worker would start its own.
    Start one here and export its URL before the workers spawn; None when an API is configured.
    `while_starting` is called once the server process is launched, before waiting for it (this
    process idles then). Flow runs against a temporary API send no heartbeats, also in a child
    process given its parent's temporary API (a benchmark's builds)."""
    if configured := os.environ.get("PREFECT_API_URL"):
        if configured == os.environ.get(TEMPORARY_API):
            _without_heartbeats()
        return None
    url = _start_temporary_api(while_starting)
    if url is None:  # an API configured in the user's Prefect profile
        return None
    os.environ["PREFECT_API_URL"] = os.environ[TEMPORARY_API] = url
    if not os.environ.get("PREFECT_API_SSL_CERT_FILE"):
        os.environ["PREFECT_API_SSL_CERT_FILE"] = str(_one_root_certificate())
    from prefect.context import refresh_global_settings_context

    refresh_global_settings_context()  # Prefect read its settings at import: this process's client uses it too
    _without_heartbeats()
    return url


def _without_heartbeats() -> None:
    """Switch off flow-run heartbeats for this process. Prefect beats from a thread that sleeps in
    1 s steps and is joined when the run ends, so every flow run would end up to 1 s late. The
    beats only feed a lasting server's detection of crashed runs; a temporary API ends with the
    process that started it. `None` cannot be given through the environment, so the process's
    settings are replaced, as Prefect's own refresh does."""
    import prefect.context
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY

    now = prefect.context.GLOBAL_SETTINGS_CONTEXT
    prefect.context.GLOBAL_SETTINGS_CONTEXT = prefect.context.SettingsContext(
        profile=now.profile, settings=now.settings.copy_with_update(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}))


def _start_temporary_api(while_starting: Callable[[], object] | None = None) -> str | None:
    """Serve Prefect's API app (wrapped: flows/api_server.py) from a child process, as Prefect's
    own temporary server does (the same "ephemeral" flags; the child reads the same environment
    and profile), without importing `prefect.server` in the build's process. The child is launched before this
    process imports Prefect (`launch_temporary_api`), so the two start side by side; it is stopped
    when this process exits, or at once when the user's profile configures an API after all (None)."""
    launch_temporary_api()
    proc, port = _LAUNCHED[0]
    import httpx
    from prefect.settings import PREFECT_API_URL, get_current_settings

    if PREFECT_API_URL.value():
        _stop(proc)
        _LAUNCHED.clear()
        return None
    if while_starting is not None:
        while_starting()
    url, wait = f"http://127.0.0.1:{port}/api", get_current_settings().server.ephemeral.startup_timeout_seconds
    deadline = time.monotonic() + wait
    with httpx.Client() as client:
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                if client.get(f"{url}/health").status_code == 200:
                    return url
            except httpx.TransportError:
                pass
            time.sleep(0.1)
    _stop(proc)
    raise RuntimeError(f"the temporary Prefect API did not start within {wait} s (server exit code {proc.poll()}); "
                       "set PREFECT_API_URL to use a running Prefect server")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # a server that does not stop is killed
            proc.kill()
            proc.wait()


def _one_root_certificate() -> Path:
    """A CA file of one certificate (certifi's first), for the API clients of the temporary
    server: they speak plain HTTP to 127.0.0.1 and never verify a certificate, yet each builds a
    verifying TLS context from certifi's whole bundle, twice per task on a Dask worker; loading one
    certificate is much cheaper."""
    import certifi

    bundle = Path(certifi.where()).read_text(encoding="ascii")
    end = "-----END CERTIFICATE-----\n"
    first = bundle[bundle.index("-----BEGIN CERTIFICATE-----"):bundle.index(end) + len(end)]
    path = Path(tempfile.gettempdir()) / f"express-local-api-ca-{hashlib.sha256(first.encode()).hexdigest()[:12]}.pem"
    if not path.exists():
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(first, encoding="ascii")
        tmp.replace(path)
    return path


def start_gate_helper(recipe: Any, in_process: bool, publish: bool) -> bool:  # recipe: schemas.config.Recipe
    """For a build whose steps run in this process and that publishes through the gate, start the
    gate's helper process (warehouse/gate_process.py): it imports Great Expectations and the gate
    and loads the PII detectors on the core the steps leave idle, and validates the release there.
    `express build` starts it once its request is checked, a build's flow (if not yet) as it
    starts. A build on a cluster validates in this process once its workers are gone: the helper
    would hold its memory beside the workers at their peak and take CPU they need."""
    if not (in_process and publish and recipe.gate.enabled):
        return False
    from privacy.kinds import enabled_kinds
    from warehouse import gate_process

    gate_process.start(enabled_kinds(recipe.filters))
    return True


def skip_exit_collection() -> None:
    """Freeze every live object just before the interpreter exits, so its final garbage collections
    skip them (a process that imported what a build imports otherwise spends a second collecting
    cycles that are about to vanish). Exit handlers still run and files are closed by then."""
    sys.stdout.flush()
    sys.stderr.flush()
    gc.freeze()
