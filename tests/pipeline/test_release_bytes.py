"""What the build publishes is pinned (tests/pipeline/golden.py): the demo release's bytes, run
tables and manifest, built in one go or resumed after part of its work was lost."""
from __future__ import annotations

from pathlib import Path

from schemas.config import load_recipe
from tests.pipeline.golden import describe, expected, sha256

REPO = Path(__file__).resolve().parents[2]
CONFIG = str(REPO / "configs" / "demo.toml")


def test_the_golden_release_records_the_demo_recipe_as_it_loads_today():
    """Quick, before any build: a change of the recipe's form (a key added or moved) shows here, and
    means rewriting the golden (its data files stay the same, as the build test then shows)."""
    assert expected()["manifest"]["config"] == load_recipe(CONFIG).to_dict()


def test_the_demo_corpus_is_the_one_the_golden_release_was_built_from(demo_dump):
    assert sha256(demo_dump) == expected()["demo_dump_sha256"]


def test_the_demo_build_publishes_the_golden_release_bytes_tables_and_manifest(demo_build):
    run = Path(demo_build["extract"]["examples"]).parent
    got = describe(demo_build["release"]["manifest"], run, Path(demo_build["ingest"]["quarantine"]).parent)
    want = expected()
    assert got["files"] == want["files"]
    assert got["manifest"] == want["manifest"]


def test_a_sharded_build_resumed_after_losing_work_publishes_the_golden_release(prefect_harness, demo_dump, tmp_path):
    """Six shards; then the work a kill could lose is lost (the markers of the last steps of some
    shards, and of assembling); the same build again redoes only that and publishes the same release."""
    from tests.builds import build

    wh = str(tmp_path / "wh")
    first = build([str(demo_dump)], wh, CONFIG, 150, workers=0, publish=False)
    assert first["release"] is None and first["shards"] == 6
    shards = sorted(p for p in (Path(first["extract"]["examples"]).parent / "shards").iterdir() if p.is_dir())
    lost = [shards[3] / "extract.done", shards[4] / "extract.done", shards[5] / "extract.done",
            shards[5] / "filter.done", shards[5].parent.parent / "assemble.done"]
    for marker in lost:
        marker.unlink()
    second = build([str(demo_dump)], wh, CONFIG, 150, workers=0)
    assert second["run_id"] == first["run_id"]
    got, want = describe(second["release"]["manifest"]), expected()
    assert {k: v for k, v in got["files"].items() if k.startswith("release/")} == \
        {k: v for k, v in want["files"].items() if k.startswith("release/")}
    assert {**got["manifest"], "shards": 1} == want["manifest"]  # the golden release was one shard
    assert all(m.exists() for m in lost)
