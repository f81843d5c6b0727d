"""On the demo release: baselines make a leaderboard; score, compare, reports and the CLI agree."""
import json
from pathlib import Path

import pytest

from evaluation.run import EvalRequest, evaluate_release
from flows.cli import main
from tests.fakes.openai_server import FakeOpenAIServer
from warehouse.layout import Warehouse

BASELINES = ("most-frequent", "all-zero", "context-lexicon", "tfidf-logreg")


@pytest.fixture(scope="module")
def demo_runs(demo_build) -> dict:
    wh = Warehouse.at(demo_build["warehouse"])
    rel = f"{demo_build['release']['dataset']}/{demo_build['release']['version']}"
    runs = {name: evaluate_release(wh, rel, EvalRequest(name, bootstrap=200)) for name in BASELINES}
    return {"warehouse": str(wh.root), "release": rel, "runs": runs}


def test_baselines_on_the_demo_release_produce_a_leaderboard(demo_runs, capsys):
    assert main(["leaderboard", "--warehouse", demo_runs["warehouse"], "--release", demo_runs["release"],
                 "--format", "json"]) == 0
    table = json.loads(capsys.readouterr().out)
    by_run = {row["run"]: row for row in table}
    for name, run in demo_runs["runs"].items():
        row = by_run[run.run_id]
        assert row["predictor"] == name and row["split"] == "test"
        assert [row[c] for c in ("AccL", "AccV", "F1V", "VRate")] == [run.metrics[c] for c in ("AccL", "AccV", "F1V", "VRate")]
    assert [r["AccV"] for r in table] == sorted((r["AccV"] for r in table), reverse=True)
    assert main(["leaderboard", "--warehouse", demo_runs["warehouse"]]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].split()[:10] == ["release", "split", "predictor", "setting", "model", "rows", "AccL", "AccV", "F1V", "VRate"]
    assert all(any(name in line for line in text) for name in BASELINES)


def test_express_score_agrees_with_every_stored_run(demo_runs, capsys):
    for run in demo_runs["runs"].values():
        assert main(["score", "--predictions", str(run.path / "predictions.jsonl")]) == 0
        assert json.loads(capsys.readouterr().out) == json.loads((run.path / "metrics.json").read_text())
    zero = demo_runs["runs"]["all-zero"].metrics
    assert zero["F1V"] == 0.0 and zero["AccL"] == 0.0


def test_compare_prints_differences_with_paired_significance(demo_runs, capsys):
    a, b = demo_runs["runs"]["most-frequent"], demo_runs["runs"]["tfidf-logreg"]
    assert main(["compare", a.run_id, b.run_id, "--warehouse", demo_runs["warehouse"], "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["rows"] == a.metrics["rows"]
    for m in ("AccL", "AccV", "F1V", "VRate"):
        assert got["metrics"][m]["delta"] == pytest.approx(b.metrics[m] - a.metrics[m])
    assert got["metrics"]["VRate"]["wilcoxon_p"] == 1.0
    assert main(["compare", a.run_id, a.run_id, "--warehouse", demo_runs["warehouse"]]) == 0
    assert "p (Wilcoxon)" in capsys.readouterr().out
    assert main(["compare", a.run_id, "no-such-run", "--warehouse", demo_runs["warehouse"]]) == 2


def test_report_has_label_frequency_dimensions_and_confusions(demo_runs, capsys):
    run = demo_runs["runs"]["tfidf-logreg"]
    assert main(["eval-report", run.run_id, "--warehouse", demo_runs["warehouse"]]) == 0
    md = Path(capsys.readouterr().out.strip())
    text = md.read_text()
    analysis = json.loads((run.path / "analysis.json").read_text())
    top_human = analysis["distribution"]["human"]["top"][0][0]
    for needle in ("## Label distributions", "## Per-dimension scores", "## Confusions", "Jensen-Shannon",
                   "95 % interval", f"| {top_human} |", "top-5 accuracy"):
        assert needle in text, needle
    for png in ("label_frequency.png", "per_dimension.png"):
        assert (md.parent / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_evaluate_reads_server_and_key_from_the_environment(demo_build, monkeypatch, capsys, tmp_path):
    rel = f"{demo_build['release']['dataset']}/{demo_build['release']['version']}"
    config = tmp_path / "eval.toml"
    config.write_text('[evaluate]\nmodel = "from-config"\nconcurrency = 2\ntimeout = 5\nbootstrap = 50\n')
    with FakeOpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-env-secret-123")
        code = main(["evaluate", "--release", rel, "--warehouse", demo_build["warehouse"], "--predictor",
                     "openai-compatible", "--setting", "few-shot-nearest", "--limit", "4", "--config", str(config),
                     "--max-retries", "1"])
        assert code == 0 and len(server.requests) == 4
        assert set(server.auth_headers) == {"Bearer sk-env-secret-123"}
        assert {b["model"] for b in server.requests} == {"from-config"}
    out = json.loads(capsys.readouterr().out)
    run = Path(out["path"])
    config_json = json.loads((run / "config.json").read_text())
    assert config_json["options"]["concurrency"] == 2 and config_json["options"]["max_retries"] == 1
    assert config_json["setting"] == "few-shot-nearest" and Path(out["report"]).exists()
    assert all("sk-env-secret-123" not in f.read_text() for f in run.rglob("*") if f.suffix in (".json", ".jsonl", ".md"))
