"""The one Prefect API of a command's flow runs and the local Dask workers they spawn, when no API
is configured: a temporary server in a child process, its URL exported before the workers start."""
from __future__ import annotations

import atexit
import hashlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TEMPORARY_API = "EXPRESS_TEMPORARY_API"  # the URL of the temporary API this process or a parent started


def share_temporary_api(while_starting: Callable[[], object] | None = None) -> str | None:
    """Without a configured API (`PREFECT_API_URL`), Prefect starts a temporary server per process
    from that process (loading the server's code there, ~80 MB), so every Dask worker would start
    its own. Start one here and export its URL before the workers spawn; None when an API is
    configured. `while_starting` is called once the server process is launched, before waiting for
    it (3-20 s of start-up in which this process idles). Flow runs against a temporary API send no
    heartbeats (`_without_heartbeats`), also in a child process given its parent's temporary API
    (a benchmark's builds)."""
    if configured := os.environ.get("PREFECT_API_URL"):
        if configured == os.environ.get(TEMPORARY_API):
            _without_heartbeats()
        return None
    from prefect.settings import PREFECT_API_URL

    if PREFECT_API_URL.value():
        return None
    url = _start_temporary_api(while_starting)
    os.environ["PREFECT_API_URL"] = os.environ[TEMPORARY_API] = url
    if not os.environ.get("PREFECT_API_SSL_CERT_FILE"):
        os.environ["PREFECT_API_SSL_CERT_FILE"] = str(_one_root_certificate())
    from prefect.context import refresh_global_settings_context

    refresh_global_settings_context()  # Prefect read its settings at import: this process's client uses it too
    _without_heartbeats()
    return url


def _without_heartbeats() -> None:
    """Switch off flow-run heartbeats for this process. Prefect 3.9 beats from a thread that sleeps
    in 1 s steps and is joined when the run ends, so every flow run ends 0-1 s late (0.7 s measured
    at the end of a build's shard work, with its Dask workers still up). The beats only feed a
    lasting server's detection of crashed runs; a temporary API ends with the process that started
    it. `None` cannot be given through the environment, so the process's settings are replaced, as
    Prefect's own refresh does."""
    import prefect.context
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY

    now = prefect.context.GLOBAL_SETTINGS_CONTEXT
    prefect.context.GLOBAL_SETTINGS_CONTEXT = prefect.context.SettingsContext(
        profile=now.profile, settings=now.settings.copy_with_update(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}))


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
