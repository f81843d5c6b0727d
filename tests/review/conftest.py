"""Fixtures of the review tests."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.review.helpers import copy_demo
from warehouse.releases.release import Release


@pytest.fixture
def demo_copy(demo_build, tmp_path) -> tuple[Path, Release]:
    """A fresh warehouse holding a copy of the shared demo release (without its Data Docs)."""
    root = tmp_path / "wh"
    return root, copy_demo(demo_build, root)
