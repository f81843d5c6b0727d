"""Shared fixtures. Prefect runs against one temporary server for the whole session, and the
slow end-to-end build (demo corpus -> release) is made once and shared by the tests that read it."""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

_PREFECT_HOME = tempfile.mkdtemp(prefix="express-prefect-")
atexit.register(shutil.rmtree, _PREFECT_HOME, ignore_errors=True)  # the session's Prefect database
os.environ["PREFECT_HOME"] = _PREFECT_HOME
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.pop("PREFECT_API_URL", None)
os.environ["EXPRESS_API_IDLE"] = "0"  # a temporary API a test's commands start ends with their last one
for _key, _value in {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "GX_ANALYTICS_ENABLED": "false"}.items():
    os.environ.setdefault(_key, _value)
os.environ.pop("EXPRESS_WAREHOUSE", None)

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data" / "express-reference"


# What makes a test slow whatever its module says: a Prefect server, the demo build, a browser, the
# reference data (real posts through the real extractor).
SLOW_FIXTURES = {"prefect_harness", "demo_build", "browser", "shared_reference"}


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by these marks
def pytest_collection_modifyitems(config, items):
    """Marks, then order. `slow`: the module says so (pytestmark: subprocess builds, large inputs,
    model loads) or the test uses a SLOW_FIXTURES fixture; `-m "not slow"` is the quick subset.
    `shared`: the test reads ../shared. Slow tests run first, in their usual order: `make test`
    runs two xdist workers that take whole modules in this order (--dist loadfile
    --no-loadscope-reorder), so with the long ones handed out first the many short ones fill in and
    both workers end together."""
    for item in items:
        if "shared_reference" in item.fixturenames:
            item.add_marker(pytest.mark.shared)
        if SLOW_FIXTURES & set(item.fixturenames) and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session")
def shared_reference() -> Path:
    """The EXPRESS reference data beside the repo (CI has it). Missing, the tests that need it fail,
    so a run without it cannot pass for a full one; `-m "not shared"` leaves them out on purpose."""
    if not (SHARED / "segments_dev.jsonl").exists():
        pytest.fail(f"{SHARED} is missing: the tests of the shipped models' quality need the reference data "
                    "(put the shared folder beside the repo, or deselect them with -m \"not shared\")")
    return SHARED


@pytest.fixture(scope="session")
def prefect_home_template(tmp_path_factory) -> Path:
    """The run's Prefect home whose database is migrated once (tests/prefect_homes.py)."""
    from tests.prefect_homes import template

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # one template for the run's workers
    return template(root)


@pytest.fixture
def prefect_home(prefect_home_template, tmp_path) -> Path:
    """A Prefect home of the test's own, holding a copy of the migrated database."""
    from tests.prefect_homes import seeded

    return seeded(tmp_path / "prefect-home", prefect_home_template)


@pytest.fixture(scope="session")
def _seeded_session_home(prefect_home_template) -> None:
    from tests.prefect_homes import seeded

    seeded(Path(_PREFECT_HOME), prefect_home_template)


@pytest.fixture(autouse=True)
def _session_prefect_home(request):
    """Before the first slow test (the ones whose commands start Prefect), the session's home
    becomes a copy of the template; the quick subset never makes the template."""
    if request.node.get_closest_marker("slow") is not None:
        request.getfixturevalue("_seeded_session_home")


@pytest.fixture(scope="session")
def prefect_harness(prefect_home_template, tmp_path_factory):
    """One temporary API for the session's in-process flows: the server a command starts
    (flows/prefect_api.py), on a home of its own (a copy of the template), reached through this
    process's settings only, so the commands the tests run still start their own. Its flow runs
    send no heartbeats, as under the CLI's temporary API (flows/runtime/prefect_tuning.py): each
    would otherwise end up to 1 s late, waiting for the beat thread."""
    from unittest import mock

    from prefect.settings import PREFECT_API_URL, PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    from flows.prefect_api import Server
    from tests.prefect_homes import seeded

    home = seeded(tmp_path_factory.mktemp("harness-prefect-home"), prefect_home_template)
    with mock.patch.dict(os.environ, PREFECT_HOME=str(home)):  # the server's process takes it when started
        server = Server()
    try:
        with temporary_settings(updates={PREFECT_API_URL: server.wait(), PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
            yield
            from prefect.events.worker import EventsWorker
            from prefect.logging.handlers import APILogWorker

            try:  # what the flows logged and emitted reaches the server before it stops
                APILogWorker.instance().drain()
            except RuntimeError:  # no flow logged anything
                pass
            EventsWorker.drain_all()
    finally:
        server.stop()


@pytest.fixture(scope="session")
def two_releases(demo_build, demo_dump, tmp_path_factory):
    """v1 (the shared demo build, copied) and v2: v1 plus the demo's second month (the weekly rebuild's
    two releases), shared by the report, site and live-leaderboard tests."""
    from flows.cli.core import DEMO_CONFIG, demo_months
    from sources.demo import write_demo_dump
    from tests.builds import rebuild
    from warehouse.releases.release import Release

    root = tmp_path_factory.mktemp("two-releases") / "wh"
    shutil.copytree(demo_build["warehouse"], root)
    _, second = demo_months(800)
    dump = write_demo_dump(root.parent / "in", second)
    built = rebuild([str(demo_dump), str(dump)], str(root), str(DEMO_CONFIG), workers=0)
    assert built["release"]["version"] == "v2"
    return root, Release.at(root / "express-demo" / "v1"), Release.at(root / "express-demo" / "v2")


@pytest.fixture(scope="session")
def extractor():
    from extractors.disclosures import DisclosureExtractor

    return DisclosureExtractor()


@pytest.fixture(scope="session")
def extended_extractor():
    """The extractor with forms="extended" (I'm feeling, I've been, don't feel ... kept, tagged)."""
    from extractors.disclosures import DisclosureExtractor

    return DisclosureExtractor(forms="extended")


@pytest.fixture(scope="session")
def demo_dump(tmp_path_factory) -> Path:
    from sources.demo import DemoSpec, write_demo_dump

    return write_demo_dump(tmp_path_factory.mktemp("demo-input"), DemoSpec(posts=800))


@pytest.fixture(scope="session")
def demo_build(prefect_harness, demo_dump, tmp_path_factory) -> dict:
    """One real Prefect build of the demo corpus into a fresh warehouse, shared by e2e tests."""
    from tests.builds import build

    warehouse = tmp_path_factory.mktemp("warehouse")
    result = build([str(demo_dump)], str(warehouse), str(REPO / "configs" / "demo.toml"), workers=0)
    result["warehouse"] = str(warehouse)
    return result
