"""`express demo` runs the whole pipeline offline and ends with a summary (the README's quick start):
a first release, a second one rebuilt with the next month, baselines scored, its report comparing
the two, and its card linking the report. It runs as from a terminal (`make demo`), and what it
prints is its own: progress lines and the summary, no warning or log line of a library's."""
import json
import re
import sys
from pathlib import Path

import pytest

from tests.fresh_python import REPO, environ_without, run_until_idle

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)

LIBRARY_NOISE = re.compile(r"warning|traceback|error|\| (DEBUG|INFO) +\|", re.IGNORECASE)


def test_demo_command_builds_two_releases_evaluates_reports_and_exports(prefect_home, tmp_path):
    """Its temporary API's server logs all it can here (PREFECT_SERVER_LOGGING_LEVEL), none of which
    may reach the demo's output (issue 65: tracebacks of a server stopped while recording)."""
    env = environ_without("PREFECT_API", "EXPRESS_", PREFECT_HOME=str(prefect_home),
                          PREFECT_SERVER_LOGGING_LEVEL="DEBUG")
    demo = run_until_idle([sys.executable, "-m", "flows.cli", "demo", "--posts", "400", "--warehouse",
                           str(tmp_path / "wh"), "--workdir", str(tmp_path / "in")], cwd=REPO, env=env)
    assert demo.returncode == 0, demo.stderr[-3000:]
    out = demo.stdout
    for line in filter(None, demo.stderr.splitlines()):
        assert line.startswith("[") and not LIBRARY_NOISE.search(line), demo.stderr[-3000:]  # progress lines
    assert not LIBRARY_NOISE.search(out), out
    summary = out[out.index("== express demo =="):out.index("leaderboard (test split):")]
    lines = {line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip() for line in summary.splitlines()[1:]}
    assert (tmp_path / "in" / "RS_2024-01.zst").exists() and (tmp_path / "in" / "RS_2024-02.zst").exists()
    release = Path(lines["release"].split()[0])
    manifest = json.loads((release / "manifest.json").read_text())
    f = manifest["funnel"]
    assert lines["funnel"] == (f"read {f['read']} = kept {f['kept']} + dropped {sum(f['dropped'].values())} "
                               f"+ malformed {f['malformed']}")
    assert manifest["version"] == "v2" and manifest["parent_version"] == "v1"
    parent = json.loads((release.parent / "v1" / "manifest.json").read_text())
    assert f["read"] == parent["funnel"]["read"] + 80 + 6  # the second month: a fifth as many posts, 6 malformed
    added = sum(manifest["rows"].values()) - sum(parent["rows"].values())
    assert lines["parent"].startswith(f"express-demo/v1; rows +{added} -0, label JS divergence 0.")
    assert lines["gate"] == "passed" and Path(lines["card"]).exists()
    report = Path(lines["report"]).read_text()
    assert 'id="diff-splits"' in report and "Since v1" in report  # the report compares v2 with v1
    card = Path(lines["card"])
    assert "(report.html)" in card.read_text() and (card.parent / "report.html").exists()
    scores = json.loads(lines["scores"].split(":", 1)[1])
    assert scores["rows"] == manifest["rows"]["test"] and scores["VRate"] == 1.0
    for predictor in ("most-frequent", "context-lexicon", "tfidf-logreg"):
        assert predictor in out.split("leaderboard", 1)[1]
