"""Which commands Prefect orchestrates (docs/runtime.md): a build always runs as flows; `evaluate`
and the other commands a person runs by hand run as plain Python when no Prefect API is
configured (no server started, Prefect not imported), and as flows when one is, so a user's
`prefect server start` shows them; lookups, help and option errors never load Prefect, spaCy or
Great Expectations. Each command runs in a fresh interpreter, as from a terminal."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.evaluation.conftest import publish_examples, tiny_examples
from tests.fresh_python import REPO, environ_without, fresh_python, run_until_idle

pytestmark = pytest.mark.slow  # a Prefect server and fresh interpreters (tests/conftest.py)

NO_API = ("PREFECT_", "EXPRESS_")  # no API configured, none inherited, nothing else of Prefect's set
HEAVY = ("prefect", "spacy", "great_expectations")


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> dict:
    return publish_examples(tmp_path_factory.mktemp("warehouse"), tiny_examples(24),
                            {"dataset": {"name": "tiny"},
                             "splits": {"train": 0.6, "validation": 0.1, "test": 0.3, "seed": "tiny"}})


def no_api_env(tmp_path) -> dict[str, str]:
    """No Prefect API anywhere: not in the environment, no profile in an empty Prefect home."""
    home = tmp_path / "prefect-home"
    home.mkdir(exist_ok=True)
    return environ_without(*NO_API, PREFECT_HOME=str(home))


EVALUATE = """
import json, sys, psutil
from flows.cli import main
warehouse, release = sys.argv[1:3]
evaluated = main(["evaluate", "--release", release, "--warehouse", warehouse, "--predictor", "most-frequent",
                  "--limit", "5"])
print(json.dumps({"code": evaluated, "children": len(psutil.Process().children(recursive=True)),
                  "loaded": [m for m in ("prefect",) if m in sys.modules]}))
"""

LOOKUPS = """
import json, sys
from flows.cli import main
warehouse = sys.argv[1]
codes = [main(["leaderboard", "--warehouse", warehouse])]
board_loaded = [m for m in ("pyarrow", "duckdb") if m in sys.modules]
for argv in (["releases", "--warehouse", warehouse], ["takedown", "list", "--warehouse", warehouse], ["--help"],
             ["evaluate", "--help"], ["leaderboard", "--format", "nonsense"]):
    try:
        codes.append(main(argv))
    except SystemExit as exc:  # --help, and argparse's option errors
        codes.append(exc.code)
print(json.dumps({"codes": codes, "board_loaded": board_loaded, "loaded": [m for m in %r if m in sys.modules]}))
"""


def test_evaluate_without_an_api_starts_no_server_and_lookups_load_no_prefect_spacy_or_gx(release, tmp_path):
    """The evaluation is stored and no server process is left or started, nor Prefect loaded; then,
    in a fresh interpreter, the leaderboard (of that run) reads no split file and opens no catalog,
    and it, the releases, the takedown ledger, help texts and an option error load none of the three
    libraries."""
    env = no_api_env(tmp_path)
    out = fresh_python(EVALUATE, release["warehouse"], release["release"], env=env)
    lines = out.strip().splitlines()
    run = json.loads(lines[0])  # evaluate's own line: its run, stored
    assert run["rows"] == 5 and (Path(run["path"]) / "metrics.json").exists()
    assert json.loads(lines[-1]) == {"code": 0, "children": 0, "loaded": []}
    out = fresh_python(LOOKUPS % (HEAVY,), release["warehouse"], env=env)
    assert "most-frequent" in out and "tiny/v1" in out  # the leaderboard and the releases were listed
    assert json.loads(out.strip().splitlines()[-1]) == {"codes": [0, 0, 0, 0, 0, 2], "board_loaded": [], "loaded": []}


@pytest.fixture(scope="module")
def prefect_server(prefect_home_template, tmp_path_factory):
    """`prefect server start` on loopback, as a user runs it, on a copy of the migrated database;
    without its background services, which record nothing of a flow run's own state."""
    from tests.evaluation.conftest import free_port
    from tests.prefect_homes import seeded

    home = seeded(tmp_path_factory.mktemp("server-home"), prefect_home_template)
    port = free_port()
    env = environ_without(*NO_API, PREFECT_HOME=str(home), PREFECT_SERVER_ANALYTICS_ENABLED="false")
    proc = subprocess.Popen([sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port",
                             str(port), "--no-ui", "--no-services"], env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/api"
    deadline = time.monotonic() + 300
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        assert proc.poll() is None, "prefect server start ended"
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=60)


BOTH = """
import json, os, sys
from flows.cli import main
warehouse, dump, builds = sys.argv[1:4]
evaluated = main(["evaluate", "--release", "tiny/v1", "--warehouse", warehouse, "--limit", "5", "--no-report"])
built = main(["build", "--input", dump, "--warehouse", builds, "--config", "configs/demo.toml"])
print(json.dumps({"codes": [evaluated, built], "temporary": os.environ.get("EXPRESS_TEMPORARY_API")}))
"""


def test_with_a_prefect_server_configured_evaluate_and_build_are_flow_runs_there(release, prefect_server, tmp_path):
    from sources.demo import DemoSpec, write_demo_dump

    dump = write_demo_dump(tmp_path / "in", DemoSpec(posts=120))
    env = {**no_api_env(tmp_path), "PREFECT_API_URL": prefect_server, "OPENAI_API_KEY": "sk-never-a-parameter"}
    done = run_until_idle([sys.executable, "-c", BOTH, release["warehouse"], str(dump), str(tmp_path / "builds")],
                          cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"codes": [0, 0], "temporary": None}
    runs = httpx.post(f"{prefect_server}/flow_runs/filter", json={"sort": "START_TIME_ASC"}).json()
    flows = {f["id"]: f["name"] for f in httpx.post(f"{prefect_server}/flows/filter", json={}).json()}
    seen = [(flows[r["flow_id"]], r["state_type"]) for r in runs]
    assert ("express-evaluate", "COMPLETED") in seen
    evaluated = next(r for r in runs if flows[r["flow_id"]] == "express-evaluate")
    request = evaluated["parameters"]["request"]  # the run as plain values, the key never among them
    assert (request["predictor"], request["options"]["setting"], request["limit"]) == ("most-frequent", "zero-shot", 5)
    assert "sk-never-a-parameter" not in json.dumps(runs) and "api_key" not in request["options"]
    assert ("express-build", "COMPLETED") in seen
