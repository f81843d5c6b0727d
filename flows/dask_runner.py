"""Where a build's shard tasks run: in this process, on local Dask workers, or on a Dask cluster;
and the one Prefect API those worker processes report to."""
from __future__ import annotations

import atexit
import hashlib
import logging
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prefect.task_runners import ThreadPoolTaskRunner

# Dask's defaults for the local workers it spawns, changed (measured on a 50k-line extract shard):
# - MALLOC_TRIM_THRESHOLD_=65536 (Dask sets it so workers hand freed memory back at once) makes
#   glibc return and re-fault spaCy's per-batch arrays: 4.1 s -> 5.8 s (+40 %). Unset, glibc's own
#   adaptive threshold applies; peak RSS is still bounded by the shard (bench/scale.py measures it).
# - the statistical profiler samples every thread's stack every 10 ms, holding the GIL.
# - the event-loop health tick (20 ms), the memory monitors (100 ms) and the system monitor
#   (500 ms) run in every worker and, for the scheduler and nannies, in the flow process: an idle
#   2-worker cluster spent 4.7 CPU s per 30 s on them, 0.75 s at these intervals, CPU the workers
#   want on a 2-core machine (bench/README.md). The tick only feeds diagnostics; memory limits
#   are still enforced, within a second.
LOCAL_WORKER_CONFIG = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
                       "distributed.worker.profile.enabled": False,
                       "distributed.admin.tick.interval": "1s",
                       "distributed.worker.memory.monitor-interval": "1s",
                       "distributed.admin.system-monitor.interval": "2s"}


def task_runner(workers: int = 2, address: str | None = None) -> Any:
    """Dask through prefect-dask: an existing cluster at `address`, else a local one with `workers`
    single-threaded worker processes; workers=0 runs tasks one at a time in this process."""
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")  # inherited by local workers
    logging.getLogger("distributed").setLevel(logging.WARNING)  # progress lines stay readable
    if address:
        from prefect_dask import DaskTaskRunner

        return DaskTaskRunner(address=address)
    if workers <= 0:
        return ThreadPoolTaskRunner(max_workers=1)
    import dask
    from prefect_dask import DaskTaskRunner

    dask.config.set(LOCAL_WORKER_CONFIG)  # before the cluster starts: its nannies read it when they spawn
    return DaskTaskRunner(cluster_kwargs={"n_workers": workers, "threads_per_worker": 1, "processes": True,
                                          "dashboard_address": "127.0.0.1:0", "host": "127.0.0.1"})


def share_temporary_api(while_starting: Callable[[], object] | None = None) -> str | None:
    """Without a configured API (`PREFECT_API_URL`), Prefect starts a temporary server per process,
    so every Dask worker would start its own. Start one here and export its URL before the workers
    spawn; None when an API is configured. `while_starting` is called once the server process is
    launched, before waiting for it (3-20 s of start-up in which this process idles)."""
    if os.environ.get("PREFECT_API_URL"):
        return None
    from prefect.settings import PREFECT_API_URL

    if PREFECT_API_URL.value():
        return None
    url = _start_temporary_api(while_starting)
    os.environ["PREFECT_API_URL"] = url
    if not os.environ.get("PREFECT_API_SSL_CERT_FILE"):
        os.environ["PREFECT_API_SSL_CERT_FILE"] = str(_one_root_certificate())
    from prefect.context import refresh_global_settings_context

    refresh_global_settings_context()  # Prefect read its settings at import: this process's client uses it too
    return url


def _start_temporary_api(while_starting: Callable[[], object] | None = None) -> str:
    """Serve Prefect's API app from a child process, as Prefect's own temporary server does (the
    same uvicorn app, settings and "ephemeral" flags), but without importing `prefect.server` here:
    that import holds ~80 MB and costs ~2.7 CPU s in the build's flow process (bench/README.md).
    The child is stopped when this process exits."""
    import httpx
    import prefect
    from prefect.settings import get_current_settings

    settings = get_current_settings()
    env = {**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1",
           **settings.to_environment_variables(exclude_unset=True)}
    with socket.socket() as sock:  # a port the system says is free
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "--app-dir", str(Path(prefect.__file__).parents[1]),
                             "--factory", "prefect.server.api.server:create_app", "--host", "127.0.0.1",
                             "--port", str(port), "--log-level", "error", "--lifespan", "on"], env=env)
    atexit.register(_stop, proc)
    if while_starting is not None:
        while_starting()
    url, wait = f"http://127.0.0.1:{port}/api", settings.server.ephemeral.startup_timeout_seconds
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
    verifying TLS context from certifi's whole bundle, twice per task on a Dask worker (~90 ms of
    a task's ~210 ms of Prefect overhead, measured); loading one certificate costs ~5 ms."""
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
