"""Samples that can tell (docs/live.md): `--sample N --seed S` scores N rows spread over both sides of
the cutoff and over the months, the same rows for the same seed, and the run's config records the
sample; `--limit` still takes the first N. The release is demo-sized and spans two months as the weekly
rebuild's do: 150 posts in January and 75 in February, one every four hours."""
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from evaluation.live.window import iso
from evaluation.run import EvalRequest, evaluate_release
from evaluation.run_numbers import read_run_predictions
from flows.cli import main
from schemas.config import LiveFields, utc_seconds
from tests.evaluation.conftest import publish_examples, read_run_file, tiny_examples
from warehouse.layout import Warehouse

JAN, FEB = utc_seconds("2024-01-01"), utc_seconds("2024-02-01")
HOURS_4 = 4 * 3600
CUTOFFS = ("2024-02-06", "2024-01-15T12:00:00Z")  # in the second month; in the middle of the first


@pytest.fixture(scope="module")
def two_months(tmp_path_factory) -> dict:
    rows = tiny_examples(225)
    for r in rows:
        i = int(r["post_id"][1:])
        r["created_utc"] = JAN + i * HOURS_4 if i < 150 else FEB + (i - 150) * HOURS_4
    release = publish_examples(tmp_path_factory.mktemp("two-months"), rows, {
        "dataset": {"name": "two-months"}, "gate": {"enabled": False},
        "splits": {"train": 0.5, "validation": 0.0, "test": 0.5, "seed": "two"}})
    release["test"] = pq.read_table(Path(release["path"]) / "data" / "test-00000-of-00001.parquet",
                                    columns=["post_id", "segment_index", "created_utc"]).to_pylist()
    return release


def scored(release: dict, limit: int | None = None, seed: int = 0, **live) -> tuple[list[dict], dict]:
    """The rows a most-frequent run scored, and its config."""
    from evaluation.predictors.base import PredictorOptions

    run = evaluate_release(Warehouse.at(release["warehouse"]), release["release"], EvalRequest(
        "most-frequent", limit=limit, bootstrap=0, options=PredictorOptions(seed=seed), live=LiveFields(**live)))
    return list(read_run_predictions(run.path)), read_run_file(run.path, "config.json")


def stratum(created: int, cut: int | None) -> tuple[str, str]:
    return ("" if cut is None else "before" if created < cut else "after"), iso(created)[:7]


def test_a_sample_gives_both_sides_of_a_cutoff_half_its_rows_where_the_first_rows_give_one_side(two_months):
    n = 40
    for cutoff in CUTOFFS:
        cut = utc_seconds(cutoff)
        rows, config = scored(two_months, sample=n, seed=7, cutoff=cutoff)
        sides = Counter(stratum(r["created_utc"], cut)[0] for r in rows)
        assert len(rows) == n and min(sides["before"], sides["after"]) >= n / 2 - 2, (cutoff, sides)
        held = Counter(stratum(r["created_utc"], cut) for r in two_months["test"])
        drawn = Counter(stratum(r["created_utc"], cut) for r in rows)
        record = config["sample"]
        assert (record["rows"], record["drawn"], record["seed"], record["cutoff"]) == (n, n, 7, iso(cut))
        assert {(s["side"], s["month"]): (s["rows"], s["drawn"]) for s in record["strata"]} == \
            {key: (held[key], drawn[key]) for key in held}
        for side in ("before", "after"):  # within a side, its months as evenly as they allow
            months = [key for key in held if key[0] == side]
            open_ = [drawn[key] for key in months if drawn[key] < held[key]]
            assert not open_ or (max(open_) - min(open_) <= 1 and all(drawn[key] <= max(open_) for key in months))
    first, config = scored(two_months, limit=n, cutoff=CUTOFFS[0])
    assert all(r["created_utc"] < utc_seconds(CUTOFFS[0]) for r in first)  # what the issue saw: one side only
    assert config["sample"] is None and config["limit"] == n


def test_the_same_seed_draws_the_same_rows_and_another_seed_other_rows_spread_over_the_months(two_months):
    def keys(seed: int) -> list[tuple[str, int]]:
        rows, config = scored(two_months, sample=30, seed=seed)
        assert Counter(iso(r["created_utc"])[:7] for r in rows) == {"2024-01": 15, "2024-02": 15}
        assert [s["side"] for s in config["sample"]["strata"]] == ["", ""]  # no cutoff: months alone
        return [(r["post_id"], r["segment_index"]) for r in rows]

    assert keys(3) == keys(3) != keys(4)
    rows, config = scored(two_months, sample=10_000, seed=3)  # more than the window holds: every row of it
    assert len(rows) == len(two_months["test"]) == config["sample"]["drawn"]


def test_a_sample_inside_a_window_draws_only_rows_of_the_window(two_months):
    rows, config = scored(two_months, sample=20, seed=1, posted_after="2024-01-20", cutoff="2024-02-06")
    assert len(rows) == 20 and all(r["created_utc"] >= utc_seconds("2024-01-20") for r in rows)
    assert sum(s["rows"] for s in config["sample"]["strata"]) == config["window_rows"]


def test_sample_with_limit_or_probe_rows_without_a_probe_stops_the_command_in_one_line(two_months, tmp_path, capsys):
    recipe = tmp_path / "recipe.toml"
    recipe.write_text("[evaluate]\nsample = 20\n")
    common = ["evaluate", "--release", two_months["release"], "--warehouse", two_months["warehouse"]]
    runs = Path(two_months["warehouse"]) / "evaluations"
    before = set(runs.iterdir()) if runs.exists() else set()
    for flags, said in ((["--sample", "20", "--limit", "5"], "--sample draws rows across the window and --limit"),
                        (["--config", str(recipe), "--limit", "5"], f"{recipe} [evaluate] sample draws rows"),
                        (["--probe-rows", "5"], "--probe-rows: there is no probe to run on them"),
                        (["--predictor", "hf-chat", "--probe", "min-k,recall"], "--probe: unknown probe 'recall'")):
        assert main([*common, *flags]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and said in err, err
    assert (set(runs.iterdir()) if runs.exists() else set()) == before  # nothing written
