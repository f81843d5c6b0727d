"""The leaderboard scores runs from their stored answers (docs/evaluation.md, docs/live.md): a window
asked after the runs were made scores each on the rows it answered, with seeded intervals, its cutoff
and its after-cutoff side, and sends no request; a run cut by --limit shows the days its rows span;
JSON and CSV give numbers. Per month of posting, per gold word and the emotion-word rate (with the
report's flag) equal what is computed here from the stored rows.

The tiny release's post i was posted at 1700000000 + i s; two runs are made on a copy of it, and two
more are stored runs whose rows are rewritten here (as a model would answer), spread over two months."""
import csv
import io
import json
import shutil
from collections import Counter
from datetime import datetime, timezone

import numpy as np
import pytest

from evaluation.live.window import iso
from evaluation.predictors.base import PredictorOptions
from evaluation.run import evaluate_release
from evaluation.scoring.parsing import parse_answer
from evaluation.scoring.score_file import score_file
from flows.cli import main
from schemas.config import LiveFields, utc_seconds
from schemas.lexicon import default_decomposition
from schemas.vocabulary import default_vocabulary
from tests.evaluation.conftest import read_run_file
from warehouse.layout import Warehouse

T0 = 1700000000
CUT = T0 + 24
METRICS = ("AccL", "AccV", "F1V", "VRate")
DAY = 86400


def board(wh: str, capsys, *flags: str) -> dict[str, dict]:
    assert main(["leaderboard", "--warehouse", wh, "--format", "json", *flags]) == 0
    return {row["run"]: row for row in json.loads(capsys.readouterr().out)}


def write_rows(path, rows: list[dict]):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def valid(p: dict) -> bool:
    return p["parsed"] is not None and len(p["parsed"]) == len(p["surfaces"])


def stored_run(wh, source, name: str, answer) -> dict:
    """A copy of a stored run whose rows were posted every four days from 2024-01-01 and answered by
    `answer(k, gold)`; its numbers derived by `express eval-report`."""
    path = wh / "evaluations" / f"20240301T000000-{name}"
    shutil.copytree(source, path)
    preds = []
    for k, p in enumerate(read_run_file(path, "predictions.jsonl")):
        parsed = answer(k, p["surfaces"])
        assert parse_answer(output := json.dumps(parsed) if parsed else "") == parsed  # stored as a run stores it
        preds.append({**p, "created_utc": utc_seconds("2024-01-01") + 4 * DAY * k + 3600, "output": output,
                      "parsed": parsed})
    write_rows(path / "predictions.jsonl", preds)
    config = read_run_file(path, "config.json")
    (path / "config.json").write_text(json.dumps({**config, "run_id": path.name, "predictor": name,
                                                  "cutoff": {"cutoff": "2024-02-01", "source": "--cutoff"}}))
    assert main(["eval-report", str(path), "--warehouse", str(wh)]) == 0
    return {"path": path, "preds": preds, "analysis": read_run_file(path, "analysis.json"),
            "report": read_run_file(path, "report/report.md")}


@pytest.fixture(scope="module")
def runs(tiny_release, tmp_path_factory) -> dict:
    wh = tmp_path_factory.mktemp("board") / "wh"
    shutil.copytree(tiny_release["warehouse"], wh, ignore=shutil.ignore_patterns("evaluations"))
    rel = tiny_release["release"]
    whole = evaluate_release(Warehouse.at(wh), rel, "test", "most-frequent", bootstrap=200,
                             options=PredictorOptions(seed=7), live=LiveFields(cutoff=iso(CUT)))
    limited = evaluate_release(Warehouse.at(wh), rel, "test", "context-lexicon", limit=5, bootstrap=200)
    mixed = stored_run(wh, whole.path, "mixed", lambda k, gold: [  # gold, not emotion words, 'sad', invalid
        list(gold), ["weirdweek"] * len(gold), ["sad"] * len(gold), None][k % 4])
    shape_only = stored_run(wh, whole.path, "shape-only",
                            lambda k, gold: list(gold) if k % 5 == 0 else ["word", "sentence", "weirdweek"][:len(gold)])
    return {"wh": str(wh), "whole": whole, "limited": limited, "mixed": mixed, "shape_only": shape_only}


def test_a_window_asked_after_the_runs_were_made_scores_each_run_on_the_rows_it_answered_in_it(runs, capsys, tmp_path):
    whole = runs["whole"]
    made = sorted(p.name for p in whole.path.parent.iterdir())
    rows = board(runs["wh"], capsys, "--posted-after", iso(CUT))
    assert sorted(p.name for p in whole.path.parent.iterdir()) == made  # no new run: scored from stored answers
    preds = read_run_file(whole.path, "predictions.jsonl")
    inside = [p for p in preds if p["created_utc"] >= CUT]
    assert 0 < len(inside) < len(preds)
    row = rows[whole.run_id]
    assert (row["rows"], row["run_rows"], row["window"], row["board_window"]) == (len(inside), len(preds), "all",
                                                                                   f"{iso(CUT)}..")
    want = score_file(write_rows(tmp_path / "inside.jsonl", inside), default_decomposition())  # `express score`
    for m in METRICS:
        assert row[m] == pytest.approx(want[m]) and row["after_cutoff"][m] == pytest.approx(want[m])
    assert row["cutoff"] == iso(CUT) and row["after_cutoff"]["rows"] == len(inside)
    assert runs["limited"].run_id not in rows  # it answered no row posted in the window

    # AccL's interval: 200 resamples of the window's rows drawn with the run's seed (7), computed here
    masks = np.array([len(p["surfaces"]) for p in inside], dtype=float)
    hits = np.array([sum(g.lower() == a.lower() for g, a in zip(p["surfaces"], p["parsed"])) if valid(p) else 0
                     for p in inside], dtype=float)
    rng, n = np.random.default_rng(7), len(inside)
    draws = [(w @ hits) / (w @ masks) for w in (rng.multinomial(n, np.full(n, 1 / n)) for _ in range(200))]
    assert row["intervals"]["AccL"] == pytest.approx([np.percentile(draws, 2.5), np.percentile(draws, 97.5)])
    assert row["intervals"]["seed"] == 7 and row["intervals"]["samples"] == 200
    assert board(runs["wh"], capsys, "--posted-after", iso(CUT)) == rows  # the same rows, the same intervals


def test_the_whole_board_shows_each_runs_stored_intervals_and_a_limited_run_the_days_its_rows_span(runs, capsys):
    rows = board(runs["wh"], capsys)
    whole, limited = rows[runs["whole"].run_id], rows[runs["limited"].run_id]
    stored = read_run_file(runs["whole"].path, "analysis.json")["intervals"]  # the run's own, as analysed
    for m in ("AccL", "F1V"):
        assert whole["intervals"][m] == pytest.approx(stored[m])
        assert whole["intervals"][m][0] <= whole[m] <= whole["intervals"][m][1]
    preds = read_run_file(runs["limited"].path, "predictions.jsonl")
    first, last = min(p["created_utc"] for p in preds), max(p["created_utc"] for p in preds)
    assert len(preds) == 5 and limited["rows"] == 5
    assert limited["window"] == f"{iso(first - first % DAY)}..{iso(last - last % DAY + DAY)}" != "all"
    assert whole["window"] == "all"
    assert main(["leaderboard", "--warehouse", runs["wh"]]) == 0
    text = capsys.readouterr().out.splitlines()
    line = next(x for x in text if runs["whole"].run_id in x)
    assert f"{whole['AccL']:.4f} ({whole['intervals']['AccL'][0]:.3f}-{whole['intervals']['AccL'][1]:.3f})" in line
    assert text[0].split()[6:18] == ["AccL", "AccV", "F1V", "VRate", "EWRate", "cutoff", "after_rows", "after_AccL",
                                     "after_F1V", "notes", "window", "run"]


def test_json_and_csv_give_every_number_as_a_number(runs, capsys):
    rows = board(runs["wh"], capsys, "--all")
    row = rows[runs["whole"].run_id]
    for value in (row["rows"], row["masks"], *(row[m] for m in METRICS), row["EWRate"], *row["intervals"]["F1V"],
                  row["after_cutoff"]["AccL"], *row["after_cutoff"]["intervals"]["AccL"]):
        assert isinstance(value, (int, float)) and not isinstance(value, bool), value
    assert main(["leaderboard", "--warehouse", runs["wh"], "--all", "--format", "csv"]) == 0
    table = {r["run"]: r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    assert set(table) == set(rows)
    got = table[runs["whole"].run_id]
    assert int(got["rows"]) == row["rows"] and got["window"] == "all" and got["notes"] == "-"
    assert got["cutoff"] == iso(CUT) and int(got["after_rows"]) == row["after_cutoff"]["rows"]
    for m in METRICS:
        assert float(got[m]) == row[m]
        assert [float(got[f"{m}_low"]), float(got[f"{m}_high"])] == row["intervals"][m]
        assert float(got[f"after_{m}"]) == row["after_cutoff"][m]
    assert float(got["EWRate"]) == row["EWRate"]
    no_cutoff = table[runs["limited"].run_id]
    assert no_cutoff["cutoff"] == no_cutoff["after_AccL"] == ""  # no cutoff: empty cells, not zeros


def month(ts: int) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m")


def ewrate(preds: list[dict]) -> float | None:
    vocab = default_vocabulary()
    words = [w for p in preds if valid(p) for w in p["parsed"]]
    return sum(vocab.canonical(w) is not None for w in words) / len(words) if words else None


def test_scores_per_month_and_per_gold_word_equal_a_computation_from_the_stored_rows(runs, tmp_path):
    run = runs["mixed"]
    preds, analysis = run["preds"], run["analysis"]
    months: dict[str, list[dict]] = {}
    for p in preds:
        months.setdefault(month(p["created_utc"]), []).append(p)
    assert list(analysis["months"]) == sorted(months) == ["2024-01", "2024-02"]
    for m, group in months.items():
        want = score_file(write_rows(tmp_path / f"{m}.jsonl", group), default_decomposition())
        got = analysis["months"][m]
        assert (got["rows"], got["masks"]) == (want["rows"], want["masks"])
        for metric in METRICS:
            assert got[metric] == pytest.approx(want[metric])
        assert got["EWRate"] == pytest.approx(ewrate(group))
        assert len(got["intervals"]["AccL"]) == len(got["intervals"]["F1V"]) == 2
        assert f"| {m} | {want['rows']} | {want['AccL']:.4f} |" in run["report"]

    masks, hits, invalid, wrong = Counter(), Counter(), Counter(), {}
    for p in preds:
        for i, gold in enumerate(g.lower() for g in p["surfaces"]):
            masks[gold] += 1
            if not valid(p):
                invalid[gold] += 1
            elif p["parsed"][i].lower() == gold:
                hits[gold] += 1
            else:
                wrong.setdefault(gold, Counter())[p["parsed"][i].lower()] += 1
    labels = {g["gold"]: g for g in analysis["labels"]}
    assert set(labels) == set(masks) and [g["masks"] for g in analysis["labels"]] == sorted(masks.values(), reverse=True)
    for gold, n in masks.items():
        top = sorted((wrong.get(gold) or {}).items(), key=lambda wc: (-wc[1], wc[0]))[:5]
        assert labels[gold] == {"gold": gold, "masks": n, "hits": hits[gold], "AccL": pytest.approx(hits[gold] / n),
                                "invalid": invalid[gold], "wrong": [list(t) for t in top]}
    first = analysis["labels"][0]
    assert f"| {first['gold']} | {first['masks']} | {first['AccL']:.4f} | {first['invalid']} |" in run["report"]
    assert "## Per month of posting" in run["report"]
    from evaluation.outputs.board import breakdown
    from evaluation.outputs.runs import load_run

    page = breakdown(load_run(run["path"]))  # what a page reads
    assert (page["months"], page["labels"], page["cutoff"]) == (analysis["months"], analysis["labels"], "2024-02-01")


def test_the_emotion_word_rate_is_the_share_of_valid_answers_in_the_vocabulary_and_the_report_flags_shape_without_words(
        runs, capsys):
    mixed, shape_only = runs["mixed"], runs["shape_only"]
    for run in (mixed, shape_only):
        assert run["analysis"]["emotion_words"]["EWRate"] == pytest.approx(ewrate(run["preds"]))
    shown = board(runs["wh"], capsys)
    assert shown[shape_only["path"].name]["EWRate"] == pytest.approx(ewrate(shape_only["preds"]))
    # mixed: a quarter of its rows invalid (VRate 0.77), a third of the valid ones not emotion words
    assert read_run_file(mixed["path"], "metrics.json")["VRate"] < 0.9 and not mixed["analysis"]["emotion_words"]["flagged"]
    assert "Answers that are not emotion words" not in mixed["report"]
    # shape-only: every answer a list of as many words as masks, four in five rows no emotion word
    assert read_run_file(shape_only["path"], "metrics.json")["VRate"] == 1.0 and ewrate(shape_only["preds"]) < 0.5
    summary = shape_only["analysis"]["emotion_words"]
    assert summary["flagged"] and summary["not_emotion_words"][0][0] == "word"
    assert "**Answers that are not emotion words.** VRate is 1.00" in shape_only["report"]
    assert "`weirdweek`" in shape_only["report"]
    assert not read_run_file(runs["whole"].path, "analysis.json")["emotion_words"]["flagged"]  # its answers: labels
