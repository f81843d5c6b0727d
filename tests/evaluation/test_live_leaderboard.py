"""A live leaderboard end to end on real parts (docs/live.md): the demo's two months built as the
weekly rebuild builds them (v2 holds January and February), two baselines scored on v2's test split and
SmolLM2, served by llama.cpp's server, answering 24 rows sampled across both months, each run with its
knowledge cutoff. `express leaderboard --posted-after` the second month then shows every run's
after-cutoff scores with their intervals from the stored answers: no new run, nothing asked again."""
import json
import shutil
from collections import Counter

import pytest

from evaluation.live.window import iso
from evaluation.scoring.score_file import score_file
from flows.cli import main
from schemas.config import utc_seconds
from schemas.lexicon import default_decomposition
from tests.evaluation.conftest import read_run_file

pytestmark = pytest.mark.slow  # two demo releases and a model server

FEB = "2024-02-01"
ROWS = 24
CUTOFFS = {"most-frequent": "2024-01-15", "context-lexicon": "2024-01-22", "openai-compatible": FEB}


@pytest.fixture(scope="module")
def board_warehouse(two_releases, llama_server, tmp_path_factory):
    root = tmp_path_factory.mktemp("live-board") / "wh"
    shutil.copytree(two_releases[0], root, ignore=shutil.ignore_patterns("evaluations"))
    common = ["--release", "express-demo/v2", "--warehouse", str(root), "--cutoff-min-rows", "5", "--bootstrap", "200"]
    for predictor in ("most-frequent", "context-lexicon"):
        assert main(["evaluate", "--predictor", predictor, "--cutoff", CUTOFFS[predictor], *common]) == 0
    assert main(["evaluate", "--predictor", "openai-compatible", "--model", llama_server.model, "--base-url",
                 llama_server.base_url, "--cutoff", FEB, "--sample", str(ROWS), "--seed", "1", *common]) == 0
    runs = {read_run_file(p, "config.json")["predictor"]: p for p in (root / "evaluations").iterdir()}
    assert sorted(runs) == sorted(CUTOFFS)
    return root, runs


def test_smollm2s_sample_spreads_over_both_months_and_both_sides_of_its_cutoff(board_warehouse):
    _, runs = board_warehouse
    split = read_run_file(runs["most-frequent"], "predictions.jsonl")  # the whole test split
    february = sum(p["created_utc"] >= utc_seconds(FEB) for p in split)
    preds = read_run_file(runs["openai-compatible"], "predictions.jsonl")
    months = Counter(iso(p["created_utc"])[:7] for p in preds)
    assert len(preds) == ROWS and 0 < february < ROWS // 2  # the demo's second month is the smaller
    # the cutoff is the month boundary, so a side is a month: half each, the small side all it holds
    assert months == {"2024-02": february, "2024-01": ROWS - february}
    sample = read_run_file(runs["openai-compatible"], "config.json")["sample"]
    assert (sample["rows"], sample["drawn"], sample["seed"]) == (ROWS, ROWS, 1)


def test_on_the_demo_a_sample_takes_half_from_each_side_and_the_same_seed_the_same_rows(board_warehouse, capsys):
    root, _ = board_warehouse
    drawn = []
    for seed in ("3", "3", "4"):
        capsys.readouterr()
        assert main(["evaluate", "--predictor", "most-frequent", "--release", "express-demo/v2", "--warehouse",
                     str(root), "--cutoff", FEB, "--sample", "16", "--seed", seed, "--bootstrap", "0"]) == 0
        run = json.loads(capsys.readouterr().out)
        preds = read_run_file(run["path"], "predictions.jsonl")
        sides = Counter(p["created_utc"] >= utc_seconds(FEB) for p in preds)
        assert len(preds) == 16 and min(sides[False], sides[True]) >= 16 // 2 - 2
        drawn.append([(p["post_id"], p["segment_index"]) for p in preds])
        shutil.rmtree(run["path"])  # the board's test counts the module's runs
    assert drawn[0] == drawn[1] != drawn[2]


def test_the_second_months_board_shows_every_runs_after_cutoff_scores_with_intervals_without_a_new_run(
        board_warehouse, capsys, tmp_path):
    root, runs = board_warehouse
    made = sorted(p.name for p in (root / "evaluations").iterdir())
    capsys.readouterr()
    assert main(["leaderboard", "--release", "express-demo/v2", "--posted-after", FEB, "--format", "json",
                 "--warehouse", str(root)]) == 0
    board = {row["predictor"]: row for row in json.loads(capsys.readouterr().out)}
    assert sorted(p.name for p in (root / "evaluations").iterdir()) == made  # scored from the stored answers
    assert sorted(board) == sorted(CUTOFFS)

    for predictor, row in board.items():
        preds = read_run_file(runs[predictor], "predictions.jsonl")
        inside = [p for p in preds if p["created_utc"] >= utc_seconds(FEB)]
        assert 0 < len(inside) < len(preds)
        assert (row["rows"], row["run_rows"], row["cutoff"]) == (len(inside), len(preds), CUTOFFS[predictor])
        after = row["after_cutoff"]  # every row of February is after each model's cutoff
        assert after["rows"] == len(inside)
        rows_file = tmp_path / f"{predictor}.jsonl"
        rows_file.write_text("".join(json.dumps(p) + "\n" for p in inside))
        want = score_file(rows_file, default_decomposition())  # `express score` on the stored rows
        for metric in ("AccL", "F1V", "VRate"):
            assert row[metric] == pytest.approx(want[metric]) and after[metric] == pytest.approx(want[metric])
        for metric in ("AccL", "F1V"):
            low, high = after["intervals"][metric]
            assert isinstance(low, float) and low <= after[metric] <= high
            assert row["intervals"][metric] == [low, high]

    assert main(["leaderboard", "--release", "express-demo/v2", "--posted-after", FEB, "--warehouse", str(root)]) == 0
    text = capsys.readouterr().out
    smol = board["openai-compatible"]
    low, high = smol["after_cutoff"]["intervals"]["AccL"]
    line = next(x for x in text.splitlines() if smol["run"] in x)
    assert f"{smol['AccL']:.4f} ({low:.3f}-{high:.3f})" in line and FEB in line
