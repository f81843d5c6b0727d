"""The Prefect API a command's flows report to: the user's, when one is configured, else a
temporary server that express starts and the commands on the same Prefect home share.

Without a configured API, Prefect starts a temporary server in every process that runs a flow or
a task, so each Dask worker would start its own, and every command would wait for a new one. A
command instead joins the temporary server already running for its Prefect home, or starts one in
a child process (`python -m uvicorn` over `create_app` below, the way Prefect's own temporary
server runs), and exports its URL before any worker spawns; a child process of the command (a
benchmark's build) inherits it. The server starts as soon as the command knows it runs flows, and
the command waits for it only before its first flow, doing its own work meanwhile.

The server stays while any command uses it, and then for EXPRESS_API_IDLE seconds (300 unless
set; 0: it ends with its last command), so a person's next build finds it answering. It ends by
itself, however its commands ended (Ctrl-C, SIGTERM, `kill -9`): each command holds a lock on a
lease file for as long as its process lives, and the server ends once that file has been unlocked
for the idle time. It runs in a session of its own (a terminal's Ctrl-C reaches the command, not
the server), and what it writes goes to a log file in the Prefect home, which the command names
only when the server fails to start.
"""
from __future__ import annotations

import fcntl
import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.util import find_spec
from pathlib import Path
from typing import Any

TEMPORARY_API = "EXPRESS_TEMPORARY_API"  # the URL of the temporary API this process or a parent joined
APP = "flows.prefect_api:create_app"
IDLE = "EXPRESS_API_IDLE"  # seconds a temporary API stays once no command uses it
IDLE_DEFAULT = 300.0
SERVER_FILES = "EXPRESS_API_FILES"  # in the server's process: where its files are (`Files.stem`)
POLL = 0.5  # seconds between the server's looks at its lease
SLOW_START = 1.0  # seconds of waiting after which the command says it waits for the API
WAITING = "[prefect] waiting for the Prefect API (a temporary server, kept for the next commands; " \
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


def _prefect_home() -> Path:
    return Path(os.environ.get("PREFECT_HOME") or "~/.prefect").expanduser()


def _prefect_settings_files() -> bool:
    """Could Prefect's settings name an API other than through the environment? Where Prefect reads
    its settings from (its documentation, "Settings and profiles"): the profiles file, and
    prefect.toml, .env and pyproject.toml's [tool.prefect] in the working directory."""
    home = _prefect_home()
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


def idle_seconds() -> float:
    """EXPRESS_API_IDLE as seconds; a value that is none is the command's error, before it starts anything."""
    raw = os.environ.get(IDLE, "").strip()
    if not raw:
        return IDLE_DEFAULT
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{IDLE}={raw}: not a number of seconds (0 or more; 0 ends the temporary Prefect API "
                         "with its last command)")
    return value


class Files:
    """Where the commands of one Prefect home meet the temporary API of one app, beside the API's
    database: `<stem>.json` says its URL and process; the server holds a shared lock on
    `<stem>.alive` for as long as it runs; each command that uses it holds one on `<stem>.lease`;
    whoever decides to join, start or end it holds `<stem>.lock`; `<stem>.log` is what it wrote.
    Locks (flock) end with the process that holds them, however it ends."""

    def __init__(self, stem: Path) -> None:
        self.stem = stem

    @classmethod
    def of(cls, app: str) -> Files:
        home = _prefect_home()
        home.mkdir(parents=True, exist_ok=True)
        return cls(home / f"express-api.{app.split(':')[0].rsplit('.', 1)[-1]}")

    def path(self, suffix: str) -> Path:
        return self.stem.with_name(self.stem.name + suffix)

    def hold(self, suffix: str) -> int:
        """A descriptor holding a shared lock on the file (released when it is closed or its process ends)."""
        fd = os.open(self.path(suffix), os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_SH)
        return fd

    def held(self, suffix: str) -> bool:
        """Does any process hold a lock on the file?"""
        fd = os.open(self.path(suffix), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    @contextmanager
    def deciding(self) -> Iterator[None]:
        fd = os.open(self.path(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def recorded(self) -> dict[str, Any] | None:
        """The record of the last server started here ({url, pid, code}), if there is one."""
        try:
            return json.loads(self.path(".json").read_text())
        except (OSError, ValueError):
            return None

    def running(self, code: str) -> dict[str, Any] | None:
        """The server recorded here, if its process still runs and serves `code` (call while deciding)."""
        recorded = self.recorded()
        if recorded is None or recorded.get("code") != code:
            return None
        return recorded if self.held(".alive") and _runs(recorded["pid"]) else None

    def record(self, url: str, pid: int, code: str) -> None:
        self.path(".json").write_text(json.dumps({"url": url, "pid": pid, "code": code}))

    def forget(self, pid: int) -> None:
        """Remove the record if it names process `pid` (call while deciding)."""
        if (self.recorded() or {}).get("pid") == pid:
            self.path(".json").unlink(missing_ok=True)


def _runs(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):  # gone (or the number is another user's process now)
        return False
    return True


def create_app() -> Any:
    """uvicorn's factory in the server's process: Prefect's API app as its temporary server runs
    it (no UI, no background services but those a temporary server needs)."""
    from prefect.server.api.server import create_app as prefect_app

    end_when_unused()
    return prefect_app(ephemeral=True, final=True)


def end_when_unused() -> None:
    """In the server's process: stop the server (as SIGTERM does) once no command has held its
    lease for EXPRESS_API_IDLE seconds, removing its record first, under the lock commands decide
    under, so none joins a server that is ending; at once if its files are gone (their Prefect home
    was removed). If it has not stopped a while later, end the process."""
    stem = os.environ.pop(SERVER_FILES, None)
    if stem is None:
        return
    files, idle = Files(Path(stem)), idle_seconds()

    def watch() -> None:
        unused_since = None
        try:
            while True:
                time.sleep(POLL)
                if files.held(".lease"):
                    unused_since = None
                    continue
                unused_since = unused_since or time.monotonic()
                if time.monotonic() - unused_since < idle:
                    continue
                with files.deciding():
                    if not files.held(".lease"):
                        files.forget(os.getpid())
                        break
                unused_since = None
        except OSError:  # its files are gone with their Prefect home: no command can find it
            pass
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)
        os._exit(1)

    threading.Thread(target=watch, name="end-when-unused", daemon=True).start()


def _repo() -> Path:
    """Where the app's module is, found without importing it."""
    return Path(find_spec("flows").origin).parents[1]


def served_code() -> str:
    """What a server would run for this command: its Python, express's checkout and the installed
    Prefect (its package file, as written: an upgrade rewrites it). A command joins only a server
    of the same (an upgrade starts a new one; the old ends once idle). Found without importing
    Prefect or reading package metadata, on every orchestrating command's start."""
    prefect = Path(find_spec("prefect").origin)
    stat = prefect.stat()
    return f"{sys.executable} {_repo()} {prefect} {stat.st_ino}:{stat.st_mtime_ns}"


def is_temporary() -> bool:
    """Do this process's flows report to a temporary API (its own or a parent command's)?"""
    url = os.environ.get("PREFECT_API_URL")
    return bool(url) and url == os.environ.get(TEMPORARY_API)


class Server:
    """The temporary API this command uses: the one running for its Prefect home and app, joined,
    else one launched now; waited for later. The command holds its lease until its process ends."""

    def __init__(self, app: str = APP) -> None:
        idle_seconds()  # a bad EXPRESS_API_IDLE is refused before anything starts
        self.files = Files.of(app)
        self.proc: subprocess.Popen | None = None
        self.code = served_code()
        with self.files.deciding():
            self._lease: int | None = self.files.hold(".lease")
            running = self.files.running(self.code)
            self.pid = running["pid"] if running else None
            self.url = running["url"] if running else self._launch(app)

    def _launch(self, app: str) -> str:
        """Start a server; it inherits the lock on `.alive` that says it runs."""
        with socket.socket() as sock:  # a port the system says is free
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        alive = self.files.hold(".alive")
        self.files.path(".log").unlink(missing_ok=True)  # a server still ending keeps writing to its own
        try:
            with open(self.files.path(".log"), "wb") as log:
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", "uvicorn", "--app-dir", str(_repo()), "--factory", app,
                     "--host", "127.0.0.1", "--port", str(port), "--log-level", "error", "--lifespan", "on"],
                    env={**os.environ, "PREFECT_UI_ENABLED": "0", SERVER_FILES: str(self.files.stem)},
                    pass_fds=[alive], start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=log)
        finally:
            os.close(alive)
        url = f"http://127.0.0.1:{port}/api"
        self.files.record(url, self.proc.pid, self.code)
        return url

    def _ended(self) -> bool:
        return self.proc.poll() is not None if self.proc is not None else not _runs(self.pid)

    def wait(self) -> str:
        """Its URL once it answers (saying so on stderr when that takes a while); an error if it
        ends or does not answer in time."""
        import httpx
        from prefect.settings import get_current_settings

        wait = get_current_settings().server.ephemeral.startup_timeout_seconds
        started = time.monotonic()
        told = False
        with httpx.Client() as client:
            while not self._ended() and time.monotonic() < started + wait:
                try:
                    if client.get(f"{self.url}/health").status_code == 200:
                        return self.url
                except httpx.TransportError:
                    pass
                if not told and time.monotonic() - started > SLOW_START:
                    print(WAITING, file=sys.stderr, flush=True)
                    told = True
                time.sleep(0.1)
        ended = self._ended()
        self.stop()
        raise RuntimeError(f"the temporary Prefect API did not start within {wait} s "
                           f"({self._last_words(ended)}); set PREFECT_API_URL to use a running Prefect server")

    def _last_words(self, ended: bool) -> str:
        try:
            lines = self.files.path(".log").read_text(errors="replace").splitlines()
        except OSError:
            lines = []
        last = next((line.strip() for line in reversed(lines) if line.strip()), "")
        state = (f"server exit code {self.proc.poll()}" if self.proc is not None
                 else "the server it joined ended" if ended else "the server it joined does not answer")
        return f"{state}: {last}" if last else state

    def stop(self) -> None:
        """Give up the lease and end the server if this command launched it (a server that fails to
        start; a test's own)."""
        if self._lease is not None:
            os.close(self._lease)
            self._lease = None
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:  # a server that does not stop is killed
                self.proc.kill()
                self.proc.wait()


_SERVERS: list[Server] = []  # the one this process joined or launched, if any


def start(app: str = APP) -> None:
    """Join or launch this process's temporary server, unless an API is configured or one was
    joined before; it is waited for by `ensure`."""
    if not _SERVERS and not configured():
        _SERVERS.append(Server(app))


def ensure(app: str = APP) -> str | None:
    """Make this process's flows report to an API: the configured one (returns None), else the
    temporary server this process joined or launched (`start`), now if not yet (returns its URL)."""
    start(app)
    if os.environ.get("PREFECT_API_URL") or not _SERVERS:
        return None
    url = _SERVERS[0].wait()
    os.environ["PREFECT_API_URL"] = os.environ[TEMPORARY_API] = url
    from prefect.context import refresh_global_settings_context

    refresh_global_settings_context()  # Prefect read its settings from the environment at import
    return url
