"""Predictors by name: ours (lazy), installed plugins (entry points) and PKG.MODULE:CLASS import paths."""
import json
import re
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from evaluation.predictors.registry import BUILTIN, PredictorError, get_predictor, resolve
from flows.cli import main
from warehouse.layout import Warehouse
from warehouse.releases.release import Release

REPO = Path(__file__).resolve().parents[2]

PLUGIN = '''
"""A user's predictor: the longest word of the text for every mask. It does not subclass ours."""
import re


class LongestWord:
    name = "longest-word"

    def __init__(self, options):
        self.top_k = options.top_k

    def predict(self, item):
        words = sorted(re.findall(r"[a-z]+", item.masked_text.replace("<mask>", " ")), key=lambda w: (-len(w), w))
        return repr([words[0]] * item.n_masks)
'''


def longest_word(masked_text: str) -> str:
    """The plugin's rule, written again here: longest lower-case word, ties alphabetical."""
    words = set(re.findall(r"[a-z]+", masked_text.replace("<mask>", " ")))
    best = max(len(w) for w in words)
    return min(w for w in words if len(w) == best)


@pytest.fixture
def plugin_site(tmp_path, monkeypatch) -> Path:
    """A package installed the way pip leaves it: the module plus a dist-info with an entry point."""
    site = tmp_path / "site"
    (site / "userpreds").mkdir(parents=True)
    (site / "userpreds" / "__init__.py").write_text("")
    (site / "userpreds" / "longest.py").write_text(textwrap.dedent(PLUGIN))
    (site / "userpreds" / "broken.py").write_text("class NoPredict:\n    def __init__(self, options):\n        pass\n")
    info = site / "userpreds-0.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: userpreds\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text("[express.predictors]\nlongest-word = userpreds.longest:LongestWord\n")
    monkeypatch.syspath_prepend(str(site))
    return site


def test_unknown_names_say_did_you_mean_and_fail_before_any_work(tiny_release, capsys):
    with pytest.raises(PredictorError, match="did you mean 'tfidf-logreg'"):
        resolve("tfidf-logrg")
    code = main(["evaluate", "--release", tiny_release["release"], "--warehouse", tiny_release["warehouse"],
                 "--predictor", "most-frequnt"])
    err = capsys.readouterr().err
    assert code == 2 and "unknown predictor 'most-frequnt'; did you mean 'most-frequent'?" in err
    assert "Traceback" not in err
    with pytest.raises(PredictorError, match="cannot import no_such_pkg"):
        get_predictor("no_such_pkg.mod:Thing")


def test_the_registry_imports_no_predictor_until_one_is_asked_for():
    code = ("import sys, evaluation.predictors.registry, evaluation.predictors.base; "
            "print(sorted(m for m in sys.modules if m.startswith('evaluation.')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert eval(out) == ["evaluation.predictors", "evaluation.predictors.base", "evaluation.predictors.registry"]
    # every builtin entry loads, and each module imports predictors, never the other way round
    for name, target in BUILTIN.items():
        cls = resolve(name)
        assert cls.target == target and cls.source == "builtin"
    source = (REPO / "evaluation" / "predictors" / "base.py").read_text()
    assert "import baselines" not in source and "evaluation.predictors.chat" not in source and "fill_mask" not in source


def test_a_plugin_from_a_temporary_package_runs_through_evaluate_and_reaches_the_leaderboard(
        plugin_site, tiny_release, capsys):
    wh, rel = tiny_release["warehouse"], tiny_release["release"]
    runs = {}
    for ref in ("longest-word", "userpreds.longest:LongestWord"):
        assert main(["evaluate", "--release", rel, "--warehouse", wh, "--predictor", ref, "--no-report",
                     "--bootstrap", "10"]) == 0
        runs[ref] = json.loads(capsys.readouterr().out)
    config = json.loads((Path(runs["longest-word"]["path"]) / "config.json").read_text())
    assert config["predictor_source"] == "entry point (userpreds 0.3)"
    assert config["predictor_class"] == "userpreds.longest:LongestWord"
    # its answers are the plugin's own rule, recomputed here from the test split
    test = pq.read_table(Release.find(Warehouse.at(wh), rel).split_file("test")).to_pylist()
    for path in (Path(r["path"]) for r in runs.values()):
        got = [json.loads(line)["parsed"] for line in (path / "predictions.jsonl").read_text().splitlines()]
        assert got == [[longest_word(r["masked_text"])] * r["masked_text"].count("<mask>") for r in test]
    assert main(["leaderboard", "--warehouse", wh, "--release", rel, "--format", "json"]) == 0
    board = {row["run"]: row for row in json.loads(capsys.readouterr().out)}
    for ref, out in runs.items():
        assert board[out["run_id"]]["predictor"] == ref
        assert board[out["run_id"]]["AccL"] == out["AccL"]


def test_a_plugin_class_without_predict_is_refused_with_the_reason(plugin_site, tiny_release, capsys):
    code = main(["evaluate", "--release", tiny_release["release"], "--warehouse", tiny_release["warehouse"],
                 "--predictor", "userpreds.broken:NoPredict"])
    assert code == 2 and "has neither predict_many(items) nor predict(item)" in capsys.readouterr().err


def test_the_custom_predictor_of_the_docs_runs_as_written(tiny_release, tmp_path, monkeypatch, capsys):
    doc = (REPO / "docs" / "predictors.md").read_text()
    code = doc.split("## Your own predictor", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "my_predictors").mkdir()
    (tmp_path / "my_predictors" / "prior.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    wh, rel = tiny_release["warehouse"], tiny_release["release"]
    assert main(["evaluate", "--release", rel, "--warehouse", wh, "--predictor", "my_predictors.prior:SubredditPrior",
                 "--no-report", "--bootstrap", "10"]) == 0
    out = json.loads(capsys.readouterr().out)
    train = pq.read_table(Release.find(Warehouse.at(wh), rel).split_file("train")).to_pylist()
    top = Counter(w.lower() for r in train for w in r["surfaces"]).most_common(1)[0][0]  # one subreddit in tiny
    preds = [json.loads(line) for line in (Path(out["path"]) / "predictions.jsonl").read_text().splitlines()]
    assert out["VRate"] == 1.0 and all(p["parsed"] == [top] * len(p["surfaces"]) for p in preds)
