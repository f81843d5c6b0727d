"""Reviewed precision and agreement against values computed by hand (not by the code under test)."""
from __future__ import annotations

import json

import pytest

from flows.cli import main
from review.ledger import Ledger
from review.stats import wilson
from tests.review.test_ledger import entry


@pytest.mark.parametrize("k, n, low, high", [
    (8, 10, 0.4902, 0.9433),  # Wilson (1927) score interval, z = 1.96, as tabulated
    (5, 10, 0.2366, 0.7634),
    (0, 10, 0.0, 0.2775),
    (10, 10, 0.7225, 1.0),
    (1, 6, 0.0301, 0.5635),
])
def test_wilson_interval_matches_tabulated_values(k, n, low, high):
    lo, hi = wilson(k, n)
    assert lo == pytest.approx(low, abs=1e-4) and hi == pytest.approx(high, abs=1e-4)


def _known_decisions(root):
    """10 items rated by ana and bo (plus noise that must not count):
    ana accepts 1-7, rejects 8-10; bo accepts 1-5 and 8, rejects 6, 7, 9, 10.
    Items 1-4 are pattern family1, 5-10 family2."""
    ana_accepts, bo_accepts = set(range(1, 8)), {1, 2, 3, 4, 5, 8}
    lines = [entry("i1", "reject", "ana")]  # superseded below by ana's accept of i1
    for i in range(1, 11):
        kw = {"pattern": "family1" if i <= 4 else "family2", "label": "sad" if i % 2 else "happy",
              "rule": "family1:i+feel:direct" if i <= 4 else "family2:im:direct"}
        lines.append(entry(f"i{i}", "accept" if i in ana_accepts else "reject", "ana", **kw))
        lines.append(entry(f"i{i}", "accept" if i in bo_accepts else "reject", "bo", **kw))
    lines += [entry("i11", "skip", "ana"), entry("i12", "accept", "bo"), entry("i12", "retract", "bo")]
    Ledger(root, "ds").append(lines[:7])
    Ledger(root, "ds").append(lines[7:])


def test_stats_of_a_known_decision_set(tmp_path, capsys):
    _known_decisions(tmp_path)
    assert main(["review", "stats", "--json", "--warehouse", str(tmp_path)]) == 0
    [s] = json.loads(capsys.readouterr().out)
    # consensus: 1-5 accepted by both; 6, 7, 8 split (a tie rejects); 9, 10 rejected -> 5 / 10
    o = s["overall"]
    assert (o["reviewed"], o["accepted"], o["rejected"]) == (10, 5, 5)
    assert o["precision"] == 0.5
    assert (o["low"], o["high"]) == (pytest.approx(0.236593, abs=2e-6), pytest.approx(0.763407, abs=2e-6))
    f1, f2 = s["by_pattern"]["family1"], s["by_pattern"]["family2"]
    assert (f1["accepted"], f1["reviewed"], f1["precision"]) == (4, 4, 1.0)
    assert f1["low"] == pytest.approx(0.510109, abs=2e-6) and f1["high"] == 1.0
    assert (f2["accepted"], f2["reviewed"]) == (1, 6)
    assert (f2["low"], f2["high"]) == (pytest.approx(0.030054, abs=2e-6), pytest.approx(0.563501, abs=2e-6))
    assert set(s["by_rule"]) == {"family1:i+feel:direct", "family2:im:direct"}
    assert s["by_label"]["sad"]["reviewed"] == 5  # odd items
    assert s["reviewers"]["ana"]["accepted"] == 7 and s["reviewers"]["ana"]["skipped"] == 1
    assert s["reviewers"]["bo"]["reviewed"] == 10  # i12 was retracted
    # Cohen: p_o = 7/10, p_e = .7*.6 + .3*.4 = .54 -> (0.7 - 0.54) / 0.46 = 8/23
    [pair] = s["agreement"]["pairs"]
    assert pair["items"] == 10 and pair["agreement"] == pytest.approx(0.7)
    assert pair["cohen_kappa"] == pytest.approx(8 / 23)
    # Fleiss: P_bar = 0.7, p = (13/20, 7/20), P_e = 0.545 -> 0.155 / 0.455 = 31/91
    assert s["agreement"]["fleiss_kappa"] == pytest.approx(31 / 91) and s["agreement"]["fleiss_items"] == 10
    assert s["ledger_version"] == 2 and s["ledger_sha256"] == Ledger(tmp_path, "ds").sha256()


def test_stats_text_prints_precision_interval_and_kappa(tmp_path, capsys):
    _known_decisions(tmp_path)
    assert main(["review", "stats", "--warehouse", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "reviewed precision 0.500 [0.237, 0.763] (5/10)" in out
    assert "Cohen's kappa ana vs bo: 0.348 on 10 shared items" in out
    assert "Fleiss' kappa: 0.341 on 10 items all 2 reviewers rated" in out
    assert main(["review", "stats", "--warehouse", str(tmp_path / "empty")]) == 0
    assert "no review decisions yet" in capsys.readouterr().out
