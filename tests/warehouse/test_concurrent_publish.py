"""Two publisher processes at once: the lock serialises them; the warehouse stays consistent.

The overlap is forced, not hoped for. Whichever publisher first enters the locked section (where
the version is chosen) waits there until the other has tried to take the dataset's lock and been
refused; only then does it go on. A working lock refuses the second one, so the first goes on at
once. A broken lock lets the second one in too: both then wait for each other, meet inside the
section and go on together, and both choose the same version, which the assertions catch."""
import fcntl
import json
import multiprocessing as mp
import os
import time
from dataclasses import replace
from pathlib import Path

import pytest

from common.checksums import sha256_file
from common.parquet import ParquetSink
from schemas.config import GateConfig, Recipe
from schemas.records import EXAMPLES, Example
from warehouse.releases.catalog import list_views
from warehouse.layout import Warehouse

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)

WORDS = ("sad", "happy", "guilty", "scared", "tired", "lonely", "proud", "calm")
ROWS = 3000
MEET_TIMEOUT = 120.0  # a hang guard only: each wait ends as soon as the other process has acted


def _force_overlap(lock_file: Path, refused, entered) -> None:
    """In this publisher process: note every refusal of the dataset lock (`refused`), and make the
    first entry into the locked section wait until the other publisher was refused or has entered."""
    from warehouse.layout import Warehouse as Layout

    real_flock, real_release_dir = fcntl.flock, Layout.release_dir
    lock_name, first = os.path.realpath(lock_file), [True]

    def flock(fd, operation):
        try:
            return real_flock(fd, operation)
        except BlockingIOError:
            if os.readlink(f"/proc/self/fd/{fd}") == lock_name:
                refused.set()
            raise

    def release_dir(self, dataset, version):
        if first[0]:  # publish_release asks for the release folder right after choosing its version
            first[0] = False
            with entered.get_lock():
                entered.value += 1
            deadline = time.monotonic() + MEET_TIMEOUT
            while not refused.is_set() and entered.value < 2 and time.monotonic() < deadline:
                refused.wait(0.01)
        return real_release_dir(self, dataset, version)

    fcntl.flock, Layout.release_dir = flock, release_dir


def _publisher(examples, root, version, barrier, results, refused, entered):
    from warehouse.releases.publish import PublishError, publish_release

    _force_overlap(Warehouse.at(root).lock_path("express"), refused, entered)
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
            for i in range(ROWS):
                w = WORDS[i % len(WORDS)]
                sink.write(Example(f"p{i}", 0, "sub", 0, f"I feel {w} today", "I feel <mask> today", [w], [w], ["f1"]).to_row())
    ctx = mp.get_context("spawn")
    barrier, results, refused, entered = ctx.Barrier(2), ctx.Queue(), ctx.Event(), ctx.Value("i", 0)
    procs = [ctx.Process(target=_publisher, args=(ex, tmp_path / "wh", version, barrier, results, refused, entered))
             for _ in range(2)]
    for p in procs:
        p.start()
    out = [results.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    return sorted(out), refused.is_set() and entered.value == 2  # (results, the second met the held lock)


def _assert_consistent(wh):
    for version in wh.versions("express"):
        rel = wh.release_dir("express", version)
        m = json.loads((rel / "manifest.json").read_text())
        for name, meta in m["files"].items():
            assert sha256_file(rel / name) == meta["sha256"]
        assert sum(m["rows"].values()) == ROWS
    assert not list(wh.dataset_dir("express").glob(".tmp-*"))


def test_two_concurrent_publishers_get_distinct_versions(tmp_path):
    out, met_the_lock = _run_two(tmp_path, None)
    assert out == [("ok", "v1"), ("ok", "v2")]  # without the lock both would pick v1
    assert met_the_lock
    wh = Warehouse.at(tmp_path / "wh")
    _assert_consistent(wh)
    assert {"express_v1_test", "express_v2_test"} <= set(list_views(wh))


def test_two_concurrent_publishers_of_the_same_version_never_overwrite(tmp_path):
    out, met_the_lock = _run_two(tmp_path, "v1")
    assert [o[0] for o in out] == ["ok", "refused"] and "immutable" in out[1][1], out
    assert met_the_lock
    wh = Warehouse.at(tmp_path / "wh")
    assert wh.versions("express") == ["v1"]
    _assert_consistent(wh)
