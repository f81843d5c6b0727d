"""Time windows (docs/live.md): a run scores only the rows posted in its window and stores it; the
leaderboard shows it and scores each run on the rows of a window asked for, compare names both; a bad or empty window stops the command in
one line before any work or request. The tiny release's post i was posted at 1700000000 + i s."""
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from evaluation.run import EvalRequest, evaluate_release
from evaluation.run_numbers import read_run_predictions
from evaluation.live.window import iso
from flows.cli import main
from schemas.config import LiveFields
from tests.fakes.openai_server import FakeOpenAIServer
from warehouse.layout import Warehouse

T0 = 1700000000


def at(i: int) -> str:
    return iso(T0 + i)


def window_run(tiny_release, after: str = "", before: str = "", predictor: str = "most-frequent"):
    return evaluate_release(Warehouse.at(tiny_release["warehouse"]), tiny_release["release"], EvalRequest(
        predictor, bootstrap=0, live=LiveFields(posted_after=after, posted_before=before)))


def run_folders(tiny_release) -> set[str]:
    root = Path(tiny_release["warehouse"]) / "evaluations"
    return {p.name for p in root.iterdir()} if root.exists() else set()


def test_a_run_scores_only_the_rows_posted_in_its_window_and_stores_the_window(tiny_release):
    test = pq.read_table(Path(tiny_release["path"]) / "data" / "test-00000-of-00001.parquet").to_pylist()
    inside = [(r["post_id"], r["segment_index"]) for r in test if T0 + 20 <= r["created_utc"] < T0 + 40]
    assert 0 < len(inside) < len(test)
    run = window_run(tiny_release, at(20), at(40))
    assert [(p["post_id"], p["segment_index"]) for p in read_run_predictions(run.path)] == inside
    config = json.loads((run.path / "config.json").read_text())
    assert config["window"] == {"posted_after": at(20), "posted_before": at(40)}
    assert config["window_rows"] == run.metrics["rows"] == len(inside)
    assert run.window == f"{at(20)}..{at(40)}"


def test_the_leaderboard_shows_each_runs_window_and_scores_the_runs_that_answered_rows_of_a_window_asked_for(
        tiny_release, capsys):
    runs = {"all": window_run(tiny_release), "early": window_run(tiny_release, at(0), at(24)),
            "late": window_run(tiny_release, at(24))}

    def board(*flags: str) -> dict[str, dict]:
        assert main(["leaderboard", "--warehouse", tiny_release["warehouse"], "--format", "json", *flags]) == 0
        return {row["run"]: row for row in json.loads(capsys.readouterr().out)}

    shown = board()  # the latest run per predictor and window: all three
    assert {shown[r.run_id]["window"] for r in runs.values()} == {"all", f"{at(0)}..{at(24)}", f"{at(24)}.."}
    late = board("--posted-after", at(24))  # the whole-split run counts with its rows of the window
    assert runs["late"].run_id in late and runs["early"].run_id not in late and runs["all"].run_id in late
    assert late[runs["all"].run_id]["rows"] == runs["late"].metrics["rows"] == late[runs["late"].run_id]["rows"]
    early = board("--posted-before", at(24))
    assert runs["early"].run_id in early and runs["late"].run_id not in early and runs["all"].run_id in early
    assert early[runs["all"].run_id]["rows"] == runs["early"].metrics["rows"]
    assert main(["leaderboard", "--warehouse", tiny_release["warehouse"]]) == 0
    head = capsys.readouterr().out.splitlines()[0].split()
    assert head[-2:] == ["window", "run"]
    assert main(["leaderboard", "--warehouse", tiny_release["warehouse"], "--posted-after", "someday"]) == 2
    assert "--posted-after" in capsys.readouterr().err


def test_compare_names_both_windows_and_pairs_only_the_rows_both_scored(tiny_release, capsys):
    whole, late = window_run(tiny_release), window_run(tiny_release, at(24), predictor="context-lexicon")
    assert main(["compare", whole.run_id, late.run_id, "--warehouse", tiny_release["warehouse"]]) == 0
    text = capsys.readouterr().out
    assert f"{whole.run_id}  (window all)" in text and f"{late.run_id}  (window {at(24)}..)" in text
    assert "different windows" in text and f"paired rows: {late.metrics['rows']} " in text
    assert main(["compare", whole.run_id, late.run_id, "--warehouse", tiny_release["warehouse"], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["windows"] == {"a": "all", "b": f"{at(24)}.."}


@pytest.mark.parametrize("command", [["evaluate"], ["sweep", "--settings", "zero-shot"]])
def test_an_empty_window_is_refused_in_one_line_before_any_request(tiny_release, command, capsys):
    before = run_folders(tiny_release)
    with FakeOpenAIServer() as server:
        code = main([*command, "--release", tiny_release["release"], "--warehouse", tiny_release["warehouse"],
                     "--predictor", "openai-compatible", "--model", "m-empty-window", "--base-url", server.base_url,
                     "--posted-after", "2030-01-01"])
        asked = list(server.requests)
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "no rows of tiny/v1 test were posted in the window 2030-01-01.." in err and at(0)[:10] in err
    assert asked == [] and run_folders(tiny_release) == before


@pytest.mark.parametrize("flags, said", [
    (["--posted-after", "2023-13-01"], "--posted-after: '2023-13-01' is not a date"),
    (["--posted-after", "2024-02-01", "--posted-before", "2024-01-01"], "must come before --posted-before"),
    (["--cutoff", "soon"], "--cutoff: 'soon' is not a date"),
    (["--posted-after", "0001-01-01"], "--posted-after: '0001-01-01' is out of range: a date from 1970-01-01"),
    (["--posted-before", "9999-12-31T23:00-05:00"], "--posted-before: '9999-12-31T23:00-05:00' is out of range"),
    (["--cutoff", "1969-12-31"], "--cutoff: '1969-12-31' is out of range"),
    (["--probe", "everything"], "unknown probe 'everything'"),
    (["--probe", "memorization"], "it needs --predictor openai-compatible or hf-chat"),
])
def test_a_bad_window_cutoff_or_probe_flag_is_one_line_before_any_work(tiny_release, flags, said, capsys):
    before = run_folders(tiny_release)
    code = main(["evaluate", "--release", tiny_release["release"], "--warehouse", tiny_release["warehouse"], *flags])
    err = capsys.readouterr().err
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1, err
    assert run_folders(tiny_release) == before


def test_a_bad_date_in_a_recipe_names_the_file_and_the_key(tiny_release, tmp_path, capsys):
    recipe = tmp_path / "live.toml"
    recipe.write_text('[evaluate]\nposted_before = "last week"\n')
    code = main(["evaluate", "--release", tiny_release["release"], "--warehouse", tiny_release["warehouse"],
                 "--config", str(recipe)])
    err = capsys.readouterr().err
    assert code == 2 and f"{recipe} [evaluate] posted_before: 'last week' is not a date" in err


def test_the_leaderboard_refuses_a_backwards_window_naming_both_flags(tiny_release, capsys):
    code = main(["leaderboard", "--warehouse", tiny_release["warehouse"], "--posted-after", "2024-02-01",
                 "--posted-before", "2024-01-01"])
    err = capsys.readouterr().err
    assert code == 2 and "--posted-after (2024-02-01) must come before --posted-before (2024-01-01)" in err


def test_a_stored_window_that_cannot_be_read_back_leaves_that_run_out_and_poisons_nothing(tiny_release, tmp_path,
                                                                                           capsys):
    """A run folder whose config holds a window no date parser reads (as `--posted-after 0001-01-01`
    once stored: `1-01-01..`) is named once and left out; the leaderboard and compare go on."""
    wh = tmp_path / "wh"
    shutil.copytree(tiny_release["warehouse"], wh, ignore=shutil.ignore_patterns("evaluations"))
    copy = {**tiny_release, "warehouse": str(wh)}
    whole, late = window_run(copy), window_run(copy, at(24), predictor="context-lexicon")
    poisoned = wh / "evaluations" / "20000101T000000-most-frequent-bad"
    shutil.copytree(whole.path, poisoned)
    config = json.loads((poisoned / "config.json").read_text())
    (poisoned / "config.json").write_text(json.dumps({**config, "created": "2099-01-01T00:00:00+00:00",
                                                      "window": {"posted_after": "1-01-01", "posted_before": ""}}))
    assert main(["leaderboard", "--warehouse", str(wh), "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert {row["run"] for row in json.loads(out)} == {whole.run_id, late.run_id}
    assert f"{poisoned / 'config.json'}: its window cannot be read back" in err
    assert main(["compare", whole.run_id, late.run_id, "--warehouse", str(wh)]) == 0
    assert f"paired rows: {late.metrics['rows']} " in capsys.readouterr().out
