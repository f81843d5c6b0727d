"""`express demo` runs the whole pipeline offline and ends with a summary (the README's quick start)."""
import json
from pathlib import Path

import pytest

from flows.cli import main

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)


def test_demo_command_builds_evaluates_reports_and_exports(prefect_harness, tmp_path, capsys):
    assert main(["demo", "--posts", "400", "--warehouse", str(tmp_path / "wh"),
                 "--workdir", str(tmp_path / "in")]) == 0
    out = capsys.readouterr().out
    summary = out[out.index("== express demo =="):]
    lines = {line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip() for line in summary.splitlines()[1:8]}
    assert (tmp_path / "in" / "RS_2024-01.zst").exists()
    release = Path(lines["release"].split()[0])
    manifest = json.loads((release / "manifest.json").read_text())
    f = manifest["funnel"]
    assert lines["funnel"] == (f"read {f['read']} = kept {f['kept']} + dropped {sum(f['dropped'].values())} "
                               f"+ malformed {f['malformed']}")
    assert lines["gate"] == "passed" and Path(lines["report"]).exists() and Path(lines["card"]).exists()
    scores = json.loads(lines["scores"].split(":", 1)[1])
    assert scores["rows"] == manifest["rows"]["test"] and scores["VRate"] == 1.0
    for predictor in ("most-frequent", "context-lexicon", "tfidf-logreg"):
        assert predictor in summary.split("leaderboard", 1)[1]
