import json
from dataclasses import replace

import pytest

from common.checksums import sha256_file
from common.parquet import ParquetSink
from schemas.config import GateConfig, Recipe
from schemas.records import EXAMPLES, Example
from warehouse.releases import catalog
from warehouse.releases.catalog import list_views, view_name
from warehouse.layout import Warehouse
from warehouse.releases.publish import PublishError, publish_release
from warehouse.releases.splits import split_for

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)


def _recipe():
    """The gate runs (without Data Docs, which test_gate.py covers) so publishing stays quick."""
    return replace(Recipe(), gate=GateConfig(data_docs=False))


WORDS = ("sad", "happy", "guilty", "scared", "tired", "lonely", "proud", "calm")


def _examples(path, n=60):
    with ParquetSink(path, EXAMPLES) as sink:
        for i in range(n):
            for seg in range(2):  # two segments per post: must share a split
                w = WORDS[(i + seg) % len(WORDS)]
                sink.write(Example(f"p{i}", seg, "sub", 0, f"I feel {w}", "I feel <mask>", [w], [w], ["family1"]).to_row())
    return path


def test_release_has_splits_manifest_checksums_and_catalog_views(tmp_path):
    wh = Warehouse.at(tmp_path / "wh")
    rel = publish_release(_examples(tmp_path / "ex.parquet"), wh, _recipe(), {"funnel": {}})
    m = rel.manifest()
    assert (rel.dataset, rel.version) == ("express", "v1")
    assert sum(m["rows"].values()) == 120 and sum(m["masks"].values()) == 120
    for rel_path, meta in m["files"].items():
        assert sha256_file(rel.path / rel_path) == meta["sha256"]
    con = catalog.connect(wh)
    n = con.execute(f"SELECT count(*) FROM {view_name('express', 'v1', 'train')}").fetchall()[0][0]
    assert n == m["rows"]["train"]
    ids = {s: {r[0] for r in con.execute(f"SELECT DISTINCT post_id FROM {view_name('express', 'v1', s)}").fetchall()}
           for s in ("train", "validation", "test")}
    assert not (ids["train"] & ids["test"]) and not (ids["train"] & ids["validation"])
    assert view_name("express", "latest", "test") in list_views(wh)


def test_a_published_version_is_never_overwritten(tmp_path):
    wh = Warehouse.at(tmp_path / "wh")
    ex = _examples(tmp_path / "ex.parquet")
    first = publish_release(ex, wh, _recipe(), {})
    before = first.manifest_path.read_bytes()
    with pytest.raises(PublishError, match="immutable"):
        publish_release(ex, wh, _recipe(), {}, version="v1")
    assert first.manifest_path.read_bytes() == before
    assert publish_release(ex, wh, _recipe(), {}).version == "v2"
    assert not list((tmp_path / "wh" / "express").glob(".tmp-*"))


def test_nothing_to_publish_leaves_no_release(tmp_path):
    wh = Warehouse.at(tmp_path / "wh")
    with pytest.raises(PublishError, match="no examples"):
        publish_release(_examples(tmp_path / "ex.parquet", n=0), wh, _recipe(), {})
    assert wh.versions("express") == []


def test_split_is_deterministic_and_follows_ratios():
    cfg = Recipe().splits
    splits = [split_for(f"id{i}", cfg) for i in range(5000)]
    assert splits == [split_for(f"id{i}", cfg) for i in range(5000)]
    assert 0.77 < splits.count("train") / 5000 < 0.83


def test_a_moved_or_copied_warehouse_reads_its_own_release_files(tmp_path):
    """Views name their files relative to the warehouse: a moved warehouse still reads its files,
    and a copy reads the copy's, not the original's (which is then deleted here)."""
    import shutil

    wh = Warehouse.at(tmp_path / "wh")
    rel = publish_release(_examples(tmp_path / "ex.parquet"), wh, _recipe(), {})
    rows = rel.manifest()["rows"]["train"]
    moved = tmp_path / "moved"
    (tmp_path / "wh").rename(moved)
    copy = tmp_path / "copy"
    shutil.copytree(moved, copy)
    shutil.rmtree(moved)
    con = catalog.connect(copy)
    try:
        assert con.execute(f"SELECT count(*) FROM {view_name('express', 'latest', 'train')}").fetchone()[0] == rows
        sql = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = ?",
                          [view_name("express", "v1", "train")]).fetchone()[0]
    finally:
        con.close()
    assert str(tmp_path) not in sql and "express/v1/data/train-00000-of-00001.parquet" in sql


def test_a_publish_killed_mid_way_leaves_no_folder_the_next_one_keeps(tmp_path):
    wh = Warehouse.at(tmp_path / "wh")
    left = wh.dataset_dir("express") / ".tmp-v1-0badc0de"
    (left / "data").mkdir(parents=True)
    (left / "data" / "train-00000-of-00001.parquet").write_bytes(b"half written")
    publish_release(_examples(tmp_path / "ex.parquet"), wh, _recipe(), {})
    assert not left.exists() and wh.versions("express") == ["v1"]
