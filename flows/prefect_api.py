"""The Prefect API a command's flows report to: the user's, when one is configured, else one
temporary server per command, which the command's local Dask workers share.

Without a configured API, Prefect starts a temporary server in every process that runs a flow or
a task, so each Dask worker would start its own. A command starts one instead, in a child process
(`python -m uvicorn` over `create_app` below, the way Prefect's own temporary server runs), and
exports its URL before any worker spawns; a child process of the command (a benchmark's build)
inherits it. The server starts as soon as the command knows it runs flows, and the command waits
for it only before its first flow, doing its own work meanwhile. It is stopped when the command's
process exits, and never outlives it: it runs in a session of its own (a terminal's Ctrl-C
reaches the command, which then stops it, not the server first), and it exits by itself once the
command is gone, however it ended (a pipe from the command reads end-of-file when the command's
process is killed). What the server logs (a shutdown in the middle of recording events, say) is
its own: the command prints it only when the server fails to start.
"""
from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from importlib.util import find_spec
from pathlib import Path
from typing import Any

TEMPORARY_API = "EXPRESS_TEMPORARY_API"  # the URL of the temporary API this process or a parent started
APP = "flows.prefect_api:create_app"
PARENT_PIPE = "EXPRESS_API_PARENT_PIPE"  # the server's end of the pipe its command holds open
SLOW_START = 1.0  # seconds of waiting after which the command says it waits for the API
WAITING = "[prefect] waiting for the Prefect API (a temporary server for this command; " \
          "PREFECT_API_URL names a running one)"


def configured() -> bool:
    """Is a Prefect API configured for this process: PREFECT_API_URL (also as a recipe or a parent
    command exported it), or Prefect's own settings (a profile, prefect.toml, .env, pyproject.toml)?
    Prefect, slow to import, is asked only when one of its settings files exists."""
    if os.environ.get("PREFECT_API_URL"):
        return True
    if not _prefect_settings_files():
        return False
    from prefect.settings import get_current_settings

    return bool(get_current_settings().api.url)


def from_recipe(url: str) -> None:
    """A recipe's [orchestrate] prefect_api_url, where the environment names no API: exported as
    PREFECT_API_URL, for this command and the processes it starts."""
    if not url or os.environ.get("PREFECT_API_URL"):
        return
    os.environ["PREFECT_API_URL"] = url
    if "prefect.context" in sys.modules:  # Prefect read its settings from the environment at import
        from prefect.context import refresh_global_settings_context

        refresh_global_settings_context()


def _prefect_settings_files() -> bool:
    """Could Prefect's settings name an API other than through the environment? Where Prefect reads
    its settings from (its documentation, "Settings and profiles"): the profiles file, and
    prefect.toml, .env and pyproject.toml's [tool.prefect] in the working directory."""
    home = Path(os.environ.get("PREFECT_HOME") or "~/.prefect").expanduser()
    profiles = os.environ.get("PREFECT_PROFILES_PATH") or str(home / "profiles.toml")
    profiles = profiles.replace("$PREFECT_HOME", str(home))
    cwd = Path.cwd()

    def mentions(path: Path, text: str) -> bool:
        try:
            return text in path.read_text(errors="replace")
        except OSError:
            return False

    return bool(os.environ.get("PREFECT_PROFILE") or Path(profiles).expanduser().is_file()
                or (cwd / "prefect.toml").is_file() or mentions(cwd / ".env", "PREFECT_")
                or mentions(cwd / "pyproject.toml", "tool.prefect"))


def create_app() -> Any:
    """uvicorn's factory in the server's process: Prefect's API app as its temporary server runs
    it (no UI, no background services but those a temporary server needs)."""
    from prefect.server.api.server import create_app as prefect_app

    exit_with_parent()
    return prefect_app(ephemeral=True, final=True)


def exit_with_parent() -> None:
    """In the server's process: stop the server (as SIGTERM does) once the command that started it
    is gone, i.e. once its end of PARENT_PIPE is closed; if the server has not stopped a while
    later, end the process."""
    fd = os.environ.pop(PARENT_PIPE, None)
    if fd is None:
        return

    def watch() -> None:
        try:
            while os.read(int(fd), 1):
                pass
        except OSError:
            pass
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def is_temporary() -> bool:
    """Do this process's flows report to a temporary API (its own or a parent command's)?"""
    url = os.environ.get("PREFECT_API_URL")
    return bool(url) and url == os.environ.get(TEMPORARY_API)


class Server:
    """The temporary API's server process, launched now and waited for later. Its output is kept
    (the last lines) for the message of a server that fails to start, not printed."""

    def __init__(self, app: str = APP) -> None:
        with socket.socket() as sock:  # a port the system says is free
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        repo = Path(find_spec("flows").origin).parents[1]  # where the app's module is, without importing it
        theirs, self._ours = os.pipe()  # the server watches `theirs`: end-of-file once this process is gone
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--app-dir", str(repo), "--factory", app, "--host", "127.0.0.1",
             "--port", str(self.port), "--log-level", "error", "--lifespan", "on"],
            env={**os.environ, "PREFECT_UI_ENABLED": "0", PARENT_PIPE: str(theirs)},
            pass_fds=[theirs], start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE)
        os.close(theirs)
        self.said: deque[str] = deque(maxlen=20)  # the end of what the server wrote
        self._reader = threading.Thread(target=self._keep_output, name="api-output", daemon=True)
        self._reader.start()
        atexit.register(self.stop)

    def _keep_output(self) -> None:
        for line in self.proc.stderr:
            self.said.append(line.decode(errors="replace").rstrip())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    def wait(self) -> str:
        """Its URL once it answers (saying so on stderr when that takes a while); an error if it
        ends or does not answer in time."""
        import httpx
        from prefect.settings import get_current_settings

        wait = get_current_settings().server.ephemeral.startup_timeout_seconds
        started = time.monotonic()
        told = False
        with httpx.Client() as client:
            while self.proc.poll() is None and time.monotonic() < started + wait:
                try:
                    if client.get(f"{self.url}/health").status_code == 200:
                        return self.url
                except httpx.TransportError:
                    pass
                if not told and time.monotonic() - started > SLOW_START:
                    print(WAITING, file=sys.stderr, flush=True)
                    told = True
                time.sleep(0.1)
        self.stop()
        self._reader.join(timeout=5)  # what it wrote last, read to its end
        last = next((line for line in reversed(self.said) if line.strip()), "")
        raise RuntimeError(f"the temporary Prefect API did not start within {wait} s (server exit code "
                           f"{self.proc.poll()}{f': {last}' if last else ''}); set PREFECT_API_URL to use a "
                           "running Prefect server")

    def stop(self) -> None:
        if self._ours is not None:
            os.close(self._ours)
            self._ours = None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:  # a server that does not stop is killed
                self.proc.kill()
                self.proc.wait()


_SERVERS: list[Server] = []  # the one this process started, if any


def start(app: str = APP) -> None:
    """Launch this process's temporary server, unless an API is configured or one was launched
    before; it is waited for by `ensure`."""
    if not _SERVERS and not configured():
        _SERVERS.append(Server(app))


def ensure(app: str = APP) -> str | None:
    """Make this process's flows report to an API: the configured one (returns None), else the
    temporary server this process launched (`start`), launched now if not yet (returns its URL)."""
    start(app)
    if os.environ.get("PREFECT_API_URL") or not _SERVERS:
        return None
    url = _SERVERS[0].wait()
    os.environ["PREFECT_API_URL"] = os.environ[TEMPORARY_API] = url
    from prefect.context import refresh_global_settings_context

    refresh_global_settings_context()  # Prefect read its settings from the environment at import
    return url
