"""Prefect homes for the tests whose commands start Prefect's temporary API.

A new PREFECT_HOME makes the first server on it create and migrate its database and register
Prefect's block types, work that every later start on that home skips. A test run does that once,
in a template home (a real first start, through `flows.prefect_api.ensure` as a command does it),
and every home a test asks for is a copy of it: the test's commands then start their own server on
a database of their own, as before, without paying the first start each time.
"""
from __future__ import annotations

import fcntl
import shutil
import time
from pathlib import Path

from tests.fresh_python import environ_without, fresh_python

_READY = ".template-ready"
_FIRST_START = """
from flows import prefect_api
assert prefect_api.ensure() is not None  # a temporary API of our own, on this home's new database
"""


def template(root: Path) -> Path:
    """The run's template home under `root` (shared by the run's xdist workers), made by the first
    worker that asks; the others wait for it."""
    home = root / "prefect-home-template"
    with open(root / "prefect-home-template.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (home / _READY).exists():
            shutil.rmtree(home, ignore_errors=True)
            home.mkdir(parents=True)
            fresh_python(_FIRST_START, env=environ_without("PREFECT_API", "EXPRESS_", PREFECT_HOME=str(home)),
                         timeout=300)
            if not (home / "prefect.db").exists():
                raise AssertionError(f"the first start made no database in {home}")
            _until_its_server_ended(home)
            (home / _READY).touch()
    return home


def _until_its_server_ended(home: Path, guard: float = 300) -> None:
    """The first start's server ends by itself once its command is gone (EXPRESS_API_IDLE=0, kept by
    environ_without): the database is copied only once nothing writes to it."""
    from flows.prefect_api import Files

    deadline = time.monotonic() + guard
    for alive in home.glob("express-api.*.alive"):
        files = Files(alive.with_suffix(""))
        while files.held(".alive"):
            if time.monotonic() > deadline:
                raise AssertionError(f"the temporary API on {home} did not end within {guard:g} s of its command")
            time.sleep(0.1)


def seeded(home: Path, template_home: Path) -> Path:
    """`home` holding a copy of the template's database (created when missing), without the template's
    temporary-API files (its server is gone)."""
    shutil.copytree(template_home, home, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(_READY, "express-api.*"))
    return home
