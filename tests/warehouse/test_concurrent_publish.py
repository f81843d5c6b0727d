"""Two publisher processes at once: the lock serialises them; the warehouse stays consistent."""
import multiprocessing as mp
from dataclasses import replace

import pytest

from common.checksums import sha256_file
from common.parquet import ParquetSink
from schemas.config import GateConfig, Recipe
from schemas.records import EXAMPLES, Example
from warehouse.catalog import list_views
from warehouse.layout import Warehouse

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)

WORDS = ("sad", "happy", "guilty", "scared", "tired", "lonely", "proud", "calm")


def _publisher(examples, root, version, barrier, results):
    from warehouse.publish import PublishError, publish_release

    recipe = replace(Recipe(), gate=GateConfig(enabled=False))
    barrier.wait(timeout=120)  # both processes start publishing at the same moment
    try:
        rel = publish_release(examples, Warehouse.at(root), recipe, {"funnel": {}}, version=version)
        results.put(("ok", rel.version))
    except PublishError as exc:
        results.put(("refused", str(exc)))


def _run_two(tmp_path, version):
    ex = tmp_path / "ex.parquet"
    if not ex.exists():
        with ParquetSink(ex, EXAMPLES) as sink:
            for i in range(3000):
                w = WORDS[i % len(WORDS)]
                sink.write(Example(f"p{i}", 0, "sub", 0, f"I feel {w} today", "I feel <mask> today", [w], [w], ["f1"]).to_row())
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_publisher, args=(ex, tmp_path / "wh", version, barrier, results)) for _ in range(2)]
    for p in procs:
        p.start()
    out = [results.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    return sorted(out)


def _assert_consistent(wh):
    for version in wh.versions("express"):
        rel = wh.release_dir("express", version)
        import json

        m = json.loads((rel / "manifest.json").read_text())
        for name, meta in m["files"].items():
            assert sha256_file(rel / name) == meta["sha256"]
        assert sum(m["rows"].values()) == 3000
    assert not list(wh.dataset_dir("express").glob(".tmp-*"))


def test_two_concurrent_publishers_get_distinct_versions(tmp_path):
    out = _run_two(tmp_path, None)
    assert out == [("ok", "v1"), ("ok", "v2")]  # without the lock both would pick v1
    wh = Warehouse.at(tmp_path / "wh")
    _assert_consistent(wh)
    assert {"express_v1_test", "express_v2_test"} <= set(list_views(wh))


def test_two_concurrent_publishers_of_the_same_version_never_overwrite(tmp_path):
    out = _run_two(tmp_path, "v1")
    assert [o[0] for o in out] == ["ok", "refused"] and "immutable" in out[1][1]
    wh = Warehouse.at(tmp_path / "wh")
    assert wh.versions("express") == ["v1"]
    _assert_consistent(wh)
