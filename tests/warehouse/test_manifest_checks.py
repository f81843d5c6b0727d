"""A release's manifest is checked as its data files are: its sha256 is recorded beside it
(`manifest.json.sha256`, `sha256sum -c`'s format) and its rows are counted against the files, so an
edited, truncated, emptied or deleted manifest is refused by every command that reads the release,
naming the file; and one damaged release leaves `express releases` listing the others."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from flows.cli import main
from tests.evaluation.conftest import publish_examples, tiny_examples
from warehouse.releases.integrity import ReleaseChanged
from warehouse.layout import Warehouse
from warehouse.releases.release import Release


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    """A warehouse of two releases of a dataset, published once for the module (copied per test)."""
    root = tmp_path_factory.mktemp("manifest-wh")
    recipe = {"dataset": {"name": "tiny"}, "splits": {"train": 0.6, "validation": 0.1, "test": 0.3, "seed": "t"},
              "gate": {"enabled": False}}  # the gate is not what these tests check
    publish_examples(root, tiny_examples(24), recipe)
    publish_examples(root, tiny_examples(30), recipe)
    return root


@pytest.fixture
def wh(published, tmp_path) -> Path:
    root = tmp_path / "wh"
    shutil.copytree(published, root)
    return root


def _manifest(wh: Path, version: str = "v1") -> Path:
    return wh / "tiny" / version / "manifest.json"


def _edit_rows(path: Path) -> None:
    m = json.loads(path.read_text())
    m["rows"]["test"] += 1
    path.write_text(json.dumps(m, indent=2) + "\n")


def test_the_manifests_sha256_is_recorded_beside_it_as_sha256sum_reads_it(wh):
    manifest = _manifest(wh)
    digest, name = (manifest.parent / "manifest.json.sha256").read_text().split()
    assert name == "manifest.json" and digest == hashlib.sha256(manifest.read_bytes()).hexdigest()


def test_an_edited_manifest_is_refused_by_its_sha256_and_without_it_by_its_rows(wh):
    manifest = _manifest(wh)
    _edit_rows(manifest)
    with pytest.raises(ReleaseChanged, match=f"{manifest}: sha256 .* where manifest.json.sha256 records"):
        Release.at(manifest.parent)
    (manifest.parent / "manifest.json.sha256").unlink()  # as a release published before it was recorded
    with pytest.raises(ReleaseChanged, match=f"{manifest}: records \\d+ rows for the test split, whose files hold"):
        Release.at(manifest.parent)


@pytest.mark.parametrize("damage", ["truncated", "empty", "deleted"])
def test_a_damaged_manifest_is_refused_naming_it_and_nothing_is_written(wh, capsys, damage):
    manifest = _manifest(wh)
    if damage == "truncated":
        manifest.write_bytes(manifest.read_bytes()[:200])
    elif damage == "empty":
        manifest.write_bytes(b"")
    else:
        manifest.unlink()
    said = {"truncated": "not whole JSON", "empty": "empty", "deleted": "missing"}[damage]
    code = main(["evaluate", "--release", "tiny/v1", "--warehouse", str(wh), "--no-report"])
    err = capsys.readouterr().err
    assert code == 2 and f"{manifest}: " in err and said in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and not (wh / "evaluations").exists()


def test_a_release_whose_manifest_was_deleted_stays_visible_as_damaged(wh, capsys):
    _manifest(wh, "v2").unlink()
    assert Warehouse.at(wh).versions("tiny") == ["v1", "v2"]  # the latest is still v2: no rebuild takes v1
    with pytest.raises(ReleaseChanged, match="manifest.json: missing"):
        Release.find(Warehouse.at(wh), "v2")


def test_one_damaged_release_is_listed_as_damaged_and_the_others_as_always(wh, capsys):
    _edit_rows(_manifest(wh, "v1"))
    assert main(["releases", "--warehouse", str(wh)]) == 0
    out, err = capsys.readouterr()
    first, second = out.splitlines()
    assert first.startswith("tiny/v1\tdamaged: ") and str(_manifest(wh, "v1")) in first
    assert second.startswith("tiny/v2\t") and "rows=" in second and "months=" in second
    assert "1 damaged release" in err
