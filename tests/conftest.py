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
for _key, _value in {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "GX_ANALYTICS_ENABLED": "false"}.items():
    os.environ.setdefault(_key, _value)
os.environ.pop("EXPRESS_WAREHOUSE", None)

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data" / "express-reference"


def pytest_collection_modifyitems(config, items):
    """Modules marked `slow` (pytestmark) run first, in their usual order. `make test` runs two xdist
    workers that take whole modules in this order (--dist loadfile --no-loadscope-reorder): with
    the long modules handed out first, the many short ones fill in and both workers end together."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session")
def shared_reference() -> Path:
    """The EXPRESS reference data beside the repo; tests that need it skip cleanly without it."""
    if not (SHARED / "segments_dev.jsonl").exists():
        pytest.skip("../shared/data/express-reference is not available")
    return SHARED


@pytest.fixture(scope="session")
def prefect_harness():
    """One temporary server; its flow runs send no heartbeats, as under the CLI's temporary API
    (flows/process.py): each would otherwise end up to 1 s late, waiting for the beat thread."""
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}), \
            prefect_test_harness(server_startup_timeout=90):
        yield


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
