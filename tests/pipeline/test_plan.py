"""Planning a build: what runs where is decided once, before any flow starts."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard

from common.errors import InputError
from pipeline.plan import BuildRequest, one_shard, plan_build
from schemas.config import load_recipe, override
from sources.dumps import count_lines

REPO = Path(__file__).resolve().parents[2]


def _dump(path: Path, n: int, newline_at_end: bool = True) -> Path:
    lines = [json.dumps({"id": f"p{i}", "title": "t", "selftext": "I feel so tired"}) for i in range(n)]
    data = ("\n".join(lines) + ("\n" if newline_at_end else "")).encode()
    path.write_bytes(zstandard.ZstdCompressor().compress(data) if path.suffix == ".zst" else data)
    return path


def test_lines_are_counted_as_the_split_counts_them_and_only_up_to_the_limit(tmp_path):
    assert count_lines(_dump(tmp_path / "RS_a.zst", 7), 100) == 7
    assert count_lines(_dump(tmp_path / "RS_b.jsonl", 7, newline_at_end=False), 100) == 7  # a last line all the same
    assert count_lines(_dump(tmp_path / "RS_c.zst", 500), 10) == 10


def test_one_shards_work_runs_in_this_process_whatever_the_workers_asked(tmp_path):
    small = _dump(tmp_path / "RS_2031-01.zst", 120)
    assert one_shard([str(small)], 120) and not one_shard([str(small)], 119)
    assert not one_shard([str(small), str(_dump(tmp_path / "RS_2031-02.zst", 5))], 120)  # lines of all inputs
    wh = tmp_path / "wh"
    assert plan_build(BuildRequest(wh, [str(small)], workers=2)).workers == 0
    assert plan_build(BuildRequest(wh, [str(small)], shard_lines=50, workers=2)).workers == 2
    assert plan_build(BuildRequest(wh, [str(small)], shard_lines=50, dask_address="tcp://127.0.0.1:1")).workers == 0


def test_a_folder_without_dumps_is_no_build_but_a_watched_one_may_be_empty(tmp_path):
    with pytest.raises(InputError, match="no input dump in"):
        plan_build(BuildRequest(tmp_path / "wh", [str(tmp_path)]))
    assert plan_build(BuildRequest(tmp_path / "wh", [str(tmp_path)], watch=True)).inputs == ()


def test_a_rebuild_reuses_stored_shards_only_when_filters_and_privacy_are_as_they_were():
    """A parent recorded by older code (the scrub_* switches under [filters], no `chain`) was made as
    the same recipe is today; a changed privacy switch or filter order means a full build."""
    from pipeline.rebuild import made_alike

    today = load_recipe("configs/demo.toml")
    older = today.to_dict()
    older["filters"] = {k: v for k, v in older["filters"].items() if k != "chain"} | older.pop("privacy")
    assert made_alike(older, today) and made_alike(today.to_dict(), today)
    assert not made_alike(older, override(today, "privacy", scrub_names=False))
    reordered = ("nsfw", "deleted", *[n for n in today.filters.chain if n not in ("nsfw", "deleted")])
    assert not made_alike(today.to_dict(), override(today, "filters", chain=reordered))
    assert not made_alike({**today.to_dict(), "filters": {"a_key_long_gone": 1}}, today)
