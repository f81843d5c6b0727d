"""A published release is read only as it was published: a data file whose size or bytes differ
from its manifest's record (one flipped byte, the file still readable) is refused by every command
that reads the release, naming the file, and nothing is written; an unchanged release is hashed
once, then known by its size and modification time."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fresh_python import REPO, environ_without
from tests.review.helpers import copy_demo
from warehouse.releases import integrity
from warehouse.releases.integrity import ReleaseChanged
from warehouse.layout import Warehouse
from warehouse.releases.release import Release

pytestmark = pytest.mark.slow  # the demo build (tests/conftest.py)


def _flip_a_byte(path: Path) -> None:
    """Change one byte inside the file's first data page, keeping its size."""
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0x01
    path.chmod(0o644)
    path.write_bytes(bytes(data))


def test_a_flipped_byte_is_refused_naming_the_file(demo_build, tmp_path):
    release = copy_demo(demo_build, tmp_path)
    changed = release.split_file("test")
    _flip_a_byte(changed)
    with pytest.raises(ReleaseChanged, match=f"{changed}: sha256 .* where its release's manifest records"):
        Release.at(release.path)


def test_a_file_of_another_size_is_refused_before_it_is_hashed(demo_build, tmp_path, monkeypatch):
    release = copy_demo(demo_build, tmp_path)
    changed = release.split_file("train")
    changed.chmod(0o644)
    with open(changed, "ab") as fh:
        fh.write(b"\0")
    monkeypatch.setattr(integrity, "sha256_file", lambda path: pytest.fail(f"hashed {path}"))
    with pytest.raises(ReleaseChanged, match=f"{changed}: .* bytes where its release's manifest records"):
        Release.at(release.path)


def test_an_unchanged_release_is_hashed_once(demo_build, tmp_path, monkeypatch):
    release = copy_demo(demo_build, tmp_path)
    Warehouse.of_release(release.path).file_checks.unlink()  # copy_demo read the release already
    hashed = []
    real = integrity.sha256_file
    monkeypatch.setattr(integrity, "sha256_file", lambda path: hashed.append(path) or real(path))
    Release.at(release.path)
    first = len(hashed)
    Release.at(release.path)
    assert first == len(release.manifest()["files"]) and len(hashed) == first
    _flip_a_byte(release.split_file("validation"))  # a new modification time: checked again, and refused
    with pytest.raises(ReleaseChanged):
        Release.at(release.path)


@pytest.mark.parametrize("command", [["report"], ["card", "--out", "{tmp}/card"],
                                     ["evaluate", "--predictor", "most-frequent", "--no-report"]])
def test_commands_that_read_a_changed_release_refuse_it_and_write_nothing(demo_build, tmp_path, prefect_home,
                                                                           command):
    release = copy_demo(demo_build, tmp_path / "wh")
    changed = release.split_file("test")
    _flip_a_byte(changed)
    args = [a.format(tmp=tmp_path) for a in command]
    env = environ_without("PREFECT_API", "EXPRESS_", PREFECT_HOME=str(prefect_home))
    done = subprocess.run([sys.executable, "-m", "flows.cli", args[0], "--release", release.release_id, *args[1:],
                           "--warehouse", str(tmp_path / "wh")], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    assert str(changed) in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "card").exists() and not (tmp_path / "wh" / "reports").exists()
    assert not (tmp_path / "wh" / "evaluations").exists() or not os.listdir(tmp_path / "wh" / "evaluations")
