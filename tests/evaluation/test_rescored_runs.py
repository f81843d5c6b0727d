"""A run a takedown rescored (docs/takedowns.md, docs/live.md): every number derived from its rows is
computed again from the rows left (the cutoff split and its too-few-rows rule, the probe summary and
its AUC, the report), `express eval-report` derives the same, the run says what left it, the
leaderboard marks it and its withdrawn release, and `compare` pairs it with a run on the successor.

One real build of the demo corpus, one most-frequent run on it with a cutoff whose "before" side
has exactly the minimum rows, and a stored probe (its rows written here, as a model would give them);
then one post posted before the cutoff is taken down and applied."""
import json
from datetime import datetime, timezone

import pyarrow.parquet as pq
import pytest
from sklearn.metrics import roc_auc_score

from evaluation.live.memorization import load_probe_settings
from evaluation.run import EvalRequest, evaluate_release
from evaluation.scoring.score_file import score_file
from evaluation.live.window import iso
from flows.cli import main
from schemas.config import LiveFields
from schemas.lexicon import default_decomposition
from tests.evaluation.conftest import publish_examples, read_run_file, tiny_examples
from warehouse.layout import Warehouse

pytestmark = pytest.mark.slow  # a build and a takedown's next release (tests/conftest.py)

METRICS = ("AccL", "AccV", "F1V", "VRate")


def probe_rows(preds: list[dict], cut: int) -> list[dict]:
    """Probe rows as the probe writes them: rows posted before the cutoff look more familiar."""
    return [{"post_id": p["post_id"], "segment_index": p["segment_index"], "created_utc": p["created_utc"],
             "min_k_prob": (-2.0 if p["created_utc"] < cut else -3.0) - 0.01 * i, "words_shown": 6,
             "continuation": "and then", "longest_common_run": i % 3, "overlap_8": 0.0}
            for i, p in enumerate(preds)]


def expected_probe(rows: list[dict], cut: int, min_rows: int) -> dict:
    """The probe summary of these rows, computed here apart from the code under test."""
    def group(g: list[dict]) -> dict:
        mean = (lambda key: sum(r[key] for r in g) / len(g)) if g else (lambda key: None)
        return {"rows": len(g), "min_k_prob": mean("min_k_prob"), "longest_common_run": mean("longest_common_run"),
                "overlap_8": mean("overlap_8")}

    before = [r for r in rows if r["created_utc"] < cut]
    after = [r for r in rows if r["created_utc"] >= cut]
    months: dict[str, list[dict]] = {}
    for r in rows:
        months.setdefault(datetime.fromtimestamp(r["created_utc"], timezone.utc).strftime("%Y-%m"), []).append(r)
    told = min(len(before), len(after)) >= min_rows
    auc = roc_auc_score([1] * len(before) + [0] * len(after), [r["min_k_prob"] for r in before + after]) if told else None
    return {"all": group(rows), "months": {m: group(g) for m, g in sorted(months.items())}, "cutoff": iso(cut),
            "before": group(before), "after": group(after),
            "min_k_auc": {"auc": auc, "before": len(before), "after": len(after),
                          **({} if told else {"note": f"too few rows to tell: {len(before)} before and {len(after)} "
                                                      f"after the cutoff, {min_rows} needed on each side"})}}


def same_numbers(got, want) -> None:
    if isinstance(want, dict):
        assert set(got) == set(want)
        for key in want:
            same_numbers(got[key], want[key])
    elif isinstance(want, float):
        assert got == pytest.approx(want)
    else:
        assert got == want


@pytest.fixture(scope="module")
def rescored(prefect_harness, tmp_path_factory) -> dict:
    from flows.takedown import apply_flow
    from sources.demo import DemoSpec, write_demo_dump
    from tests.builds import build
    from tests.conftest import REPO

    base = tmp_path_factory.mktemp("rescored")
    wh = base / "wh"
    build([str(write_demo_dump(base / "in", DemoSpec(posts=200)))], str(wh), str(REPO / "configs" / "demo.toml"),
          workers=0)
    test_rows = pq.read_table(wh / "express-demo" / "v1" / "data" / "test-00000-of-00001.parquet").to_pylist()
    times = sorted(r["created_utc"] for r in test_rows)
    cut = times[len(times) // 2]  # rows before it: no more than after it
    post = min((r for r in test_rows if r["created_utc"] < cut), key=lambda r: r["created_utc"])["post_id"]
    before = sum(t < cut for t in times)
    gone = sum(r["post_id"] == post for r in test_rows)
    min_rows = before - gone + 1  # the "before" side has enough rows until the post leaves
    assert min_rows >= 2, (before, gone)

    run = evaluate_release(Warehouse.at(wh), "express-demo/v1", EvalRequest(
        "most-frequent", bootstrap=100, live=LiveFields(cutoff=iso(cut), cutoff_min_rows=min_rows)))
    preds = read_run_file(run.path, "predictions.jsonl")
    probed = probe_rows(preds, cut)
    settings = load_probe_settings()
    (run.path / "probe.jsonl").write_text("".join(json.dumps(r) + "\n" for r in probed))
    analysis = read_run_file(run.path, "analysis.json")
    analysis["probe"] = {"probe": "memorization", "settings": {"version": settings.version, "sha256": settings.sha256,
                                                               "min_k_percent": settings.min_k_percent,
                                                               "overlap_words": settings.overlap_words},
                         "model": {"backend": "written by the test"}, "min_k_unavailable": None,
                         **expected_probe(probed, cut, min_rows)}
    (run.path / "analysis.json").write_text(json.dumps(analysis, indent=2) + "\n")
    assert main(["eval-report", run.run_id, "--warehouse", str(wh)]) == 0
    was = {name: read_run_file(run.path, name) for name in ("metrics.json", "analysis.json", "probe.jsonl")}

    assert main(["takedown", "add", "--post", post, "--reason", "asked by the writer", "--warehouse", str(wh)]) == 0
    applied = apply_flow(str(wh))
    successor = evaluate_release(Warehouse.at(wh), "express-demo/v2",
                                 EvalRequest("most-frequent", limit=len(preds) - 3, bootstrap=0))
    tiny = publish_examples(wh, tiny_examples(12), {"dataset": {"name": "tiny"}, "splits": {
        "train": 0.5, "validation": 0.1, "test": 0.4, "seed": "tiny"}})
    unrelated = evaluate_release(Warehouse.at(wh), tiny["release"], EvalRequest("most-frequent", bootstrap=0))
    return {"wh": str(wh), "run": run, "cut": cut, "post": post, "gone": gone, "min_rows": min_rows, "was": was,
            "applied": applied, "successor": successor, "unrelated": unrelated}


def test_a_run_rescored_below_the_minimum_rows_on_one_side_tells_no_difference_and_eval_report_agrees(
        rescored, tmp_path, capsys):
    run, cut, min_rows = rescored["run"], rescored["cut"], rescored["min_rows"]
    assert rescored["was"]["analysis.json"]["cutoff"]["difference"] is not None  # told, before the takedown
    preds = read_run_file(run.path, "predictions.jsonl")
    assert rescored["post"] not in {p["post_id"] for p in preds}
    metrics, split = read_run_file(run.path, "metrics.json"), read_run_file(run.path, "analysis.json")["cutoff"]
    assert metrics["rows"] == len(preds) == rescored["was"]["metrics.json"]["rows"] - rescored["gone"]
    short = min_rows - 1
    assert split["before"]["rows"] == short and split["before"]["rows"] + split["after"]["rows"] == len(preds)
    assert split["difference"] is None
    assert split["note"] == f"too few rows to tell: {short} before the cutoff, {min_rows} needed on each side"
    for side, keep in (("before", lambda t: t < cut), ("after", lambda t: t >= cut)):
        path = tmp_path / f"{side}.jsonl"
        path.write_text("".join(json.dumps(p) + "\n" for p in preds if keep(p["created_utc"])))
        scored = score_file(path, default_decomposition())  # `express score` of the side's rows left
        for m in METRICS:
            assert split[side][m] == pytest.approx(scored[m])

    report = read_run_file(run.path, "report/report.md")
    assert f"{metrics['rows']} rows, {metrics['masks']} masks." in report
    assert f"| before ({short} rows) | after ({split['after']['rows']} rows) |" in report
    assert f"No difference is given: {split['note']}." in report and "| not told |" in report
    stored = {name: (run.path / name).read_text() for name in ("metrics.json", "analysis.json", "report/report.md")}
    assert main(["eval-report", run.run_id, "--warehouse", rescored["wh"]]) == 0
    capsys.readouterr()
    for name, text in stored.items():
        assert (run.path / name).read_text() == text, f"{name}: eval-report derived other numbers"


def test_the_probe_summary_and_its_auc_are_computed_again_from_the_probe_rows_left(rescored):
    run, cut, min_rows = rescored["run"], rescored["cut"], rescored["min_rows"]
    assert rescored["was"]["analysis.json"]["probe"]["min_k_auc"]["auc"] == pytest.approx(1.0)  # told before
    rows = read_run_file(run.path, "probe.jsonl")
    assert len(rows) == len(rescored["was"]["probe.jsonl"]) - rescored["gone"]
    assert rescored["post"] not in {r["post_id"] for r in rows}
    summary = read_run_file(run.path, "analysis.json")["probe"]
    assert summary["settings"] == rescored["was"]["analysis.json"]["probe"]["settings"]  # how it ran: kept
    same_numbers({k: summary[k] for k in ("all", "months", "cutoff", "before", "after", "min_k_auc")},
                 expected_probe(rows, cut, min_rows))
    assert summary["min_k_auc"]["auc"] is None and summary["min_k_auc"]["before"] == min_rows - 1
    report = read_run_file(run.path, "report/report.md")
    assert f"| all rows | {len(rows)} |" in report and summary["min_k_auc"]["note"] in report


def test_a_rescored_run_says_what_left_it_by_which_ledger_version_with_the_metrics_before_and_after(rescored):
    run = rescored["run"]
    record = read_run_file(run.path, "config.json")["takedowns"]
    version = rescored["applied"]["ledger_version"]
    assert record["rows_removed"] == record["probe_rows_removed"] == rescored["gone"]
    assert record["ledger_version"] == version
    [entry] = record["rescored"]
    assert entry["ledger_version"] == version and entry["rows_removed"] == rescored["gone"]
    assert entry["before"] == rescored["was"]["metrics.json"]
    assert entry["after"] == read_run_file(run.path, "metrics.json") != entry["before"]
    analysis = read_run_file(run.path, "analysis.json")
    assert analysis["kept_as_answered"] == ["usage_new_tokens", "answers_from_cache", "request_errors", "throughput"]
    assert analysis["throughput"] == rescored["was"]["analysis.json"]["throughput"]
    report = read_run_file(run.path, "report/report.md")
    before, after = entry["before"], entry["after"]
    assert "## Rescored after a takedown" in report
    assert (f"| {version} | {rescored['gone']} | {before['rows']} -> {after['rows']} | "
            f"{before['AccL']:.4f} -> {after['AccL']:.4f} |") in report
    assert "not recomputed from the rows left: usage_new_tokens, answers_from_cache" in report


def test_the_leaderboard_marks_runs_on_a_withdrawn_release_and_rescored_runs_and_can_hide_them(rescored, capsys):
    wh, run, successor = rescored["wh"], rescored["run"], rescored["successor"]

    def board(*flags: str) -> str:
        assert main(["leaderboard", "--warehouse", wh, "--all", *flags]) == 0
        return capsys.readouterr().out

    rows = {r["run"]: r for r in json.loads(board("--format", "json"))}
    mark = f"withdrawn, successor express-demo/v2; rescored: {rescored['gone']} row"
    assert rows[run.run_id]["notes"].startswith(mark)
    assert rows[run.run_id]["withdrawn"]["successor"] == "express-demo/v2"
    assert rows[run.run_id]["rescored"]["rows_removed"] == rescored["gone"]
    assert rows[successor.run_id]["notes"] == "-" and rows[successor.run_id]["withdrawn"] is None
    for fmt in ("text", "markdown"):
        line = next(line for line in board("--format", fmt).splitlines() if run.run_id in line)
        assert mark in line
    shown = board("--hide-withdrawn")
    assert successor.run_id in shown and run.run_id not in shown


def test_compare_pairs_a_run_on_a_withdrawn_release_with_one_on_its_successor_but_not_an_unrelated_one(
        rescored, capsys):
    wh, run, successor = rescored["wh"], rescored["run"], rescored["successor"]
    assert main(["compare", run.run_id, successor.run_id, "--warehouse", wh, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    rows_a = read_run_file(run.path, "metrics.json")["rows"]
    assert got["rows"] == successor.metrics["rows"] and got["only_a"] == rows_a - got["rows"] > 0
    assert got["only_b"] == got["gold_differs"] == 0
    assert main(["compare", successor.run_id, run.run_id, "--warehouse", wh]) == 0
    text = capsys.readouterr().out
    assert f"paired rows: {got['rows']} (only in A: 0, only in B: {got['only_a']})" in text
    assert f"express-demo/v1 (B) was withdrawn; express-demo/v2 (A) is its successor: rows paired by post and " \
           f"segment, {got['only_a']} left out" in text
    assert main(["compare", run.run_id, rescored["unrelated"].run_id, "--warehouse", wh]) == 2
    assert "runs differ in release: express-demo/v1 vs tiny/v1" in capsys.readouterr().err
