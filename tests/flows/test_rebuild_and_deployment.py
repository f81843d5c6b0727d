"""The incremental rebuild (new dumps only, re-labelling when rules change, parent named), the weekly
deployment object (built without a server) and `express schedule` serving it."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "configs" / "demo.toml"


def test_weekly_deployment_takes_its_cron_from_the_recipe(tmp_path):
    from flows.deployments import rebuild_deployment

    cfg = tmp_path / "weekly.toml"
    cfg.write_text(CONFIG.read_text().replace('cron = "0 4 * * 1"', 'cron = "30 2 * * 0"'))
    dep = rebuild_deployment([str(tmp_path / "dumps")], str(tmp_path / "wh"), str(cfg))
    assert dep.name == "weekly-rebuild" and dep.flow_name == "express-scheduled-rebuild"
    (sched,) = dep.schedules
    assert sched.schedule.cron == "30 2 * * 0" and sched.schedule.timezone == "UTC" and sched.active
    assert dep.parameters["inputs"] == [str((tmp_path / "dumps").resolve())]
    assert dep.parameters["config"] == str(cfg.resolve())
    default = rebuild_deployment([str(tmp_path / "dumps")], str(tmp_path / "wh"), str(CONFIG))
    assert default.schedules[0].schedule.cron == "0 4 * * 1"
    assert dep.parameters["scrape"] is False
    assert rebuild_deployment([], str(tmp_path / "wh"), str(cfg), scrape=True).parameters["scrape"] is True


def test_express_schedule_serves_the_recipes_deployment_whose_run_publishes(prefect_harness, tmp_path):
    """`express schedule` registers the weekly rebuild on the Prefect server with the recipe's cron
    and the command's inputs, warehouse and recipe, and serves it: a run started from the server
    (as the schedule would start one) rebuilds into that warehouse. Ctrl-C stops it."""
    from prefect.client.orchestration import get_client
    from prefect.deployments import run_deployment
    from prefect.exceptions import ObjectNotFound
    from prefect.settings import PREFECT_API_URL

    from flows.deployments import DEPLOYMENT_NAME, scheduled_rebuild_flow
    from sources.demo import DemoSpec, write_demo_dump

    deployment = f"{scheduled_rebuild_flow.name}/{DEPLOYMENT_NAME}"
    dumps, wh = tmp_path / "dumps", tmp_path / "wh"
    write_demo_dump(dumps, DemoSpec(posts=300, month="2024-01"))
    cfg = tmp_path / "weekly.toml"
    cfg.write_text(CONFIG.read_text().replace('cron = "0 4 * * 1"', 'cron = "30 2 * * 0"'))
    env = {**os.environ, "PYTHONPATH": str(REPO), "PREFECT_API_URL": PREFECT_API_URL.value(),
           "PREFECT_RUNNER_POLL_FREQUENCY": "1"}
    # its output goes to files: a pipe nobody reads while it serves fills up and blocks it
    out, err = tmp_path / "schedule.out", tmp_path / "schedule.err"
    with open(out, "w") as out_file, open(err, "w") as err_file:
        proc = subprocess.Popen([sys.executable, "-m", "flows.cli", "schedule", "--input", str(dumps), "--config",
                                 str(cfg), "--warehouse", str(wh)], cwd=REPO, env=env, stdout=out_file,
                                stderr=err_file, text=True, start_new_session=True, preexec_fn=_ctrl_c_as_in_a_terminal)
    try:
        with get_client(sync_client=True) as client:
            deadline = time.monotonic() + 180  # a hang guard: the deployment appears once the command serves it
            while True:
                assert proc.poll() is None, err.read_text()[-2000:]
                try:
                    dep = client.read_deployment_by_name(deployment)
                    break
                except ObjectNotFound:  # not registered yet
                    assert time.monotonic() < deadline, "express schedule never registered its deployment"
                    time.sleep(0.2)
        (sched,) = dep.schedules
        assert sched.schedule.cron == "30 2 * * 0" and sched.active
        assert dep.parameters["inputs"] == [str(dumps.resolve())] and dep.parameters["warehouse"] == str(wh.resolve())
        assert dep.parameters["config"] == str(cfg.resolve())
        run = run_deployment(deployment, timeout=300, poll_interval=1)
        assert run.state.is_completed(), run.state
        assert [p.parent.name for p in wh.glob("express-demo/v*/manifest.json")] == ["v1"]
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"express schedule did not stop within 60 s of Ctrl-C: {err.read_text()[-2000:]}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert "deployment weekly-rebuild: cron 30 2 * * 0 (UTC); serving" in out.read_text()


def _ctrl_c_as_in_a_terminal() -> None:
    """The child starts with Ctrl-C's default action, as in a terminal: a process that ignores
    SIGINT (an earlier test's library can leave this worker so) passes that on to its children,
    and Python then never raises KeyboardInterrupt (a served command idled through Ctrl-C)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _month_dump(folder: Path, month: str, posts: int, seed: int, prefix: str) -> Path:
    """A demo-style dump whose post ids carry `prefix` (demo ids restart at d000000 every month)."""
    import json as _json

    import zstandard

    from sources.demo import DemoSpec, demo_records

    lines = []
    for r in demo_records(DemoSpec(posts=posts, month=month, seed=seed)):
        if isinstance(r, dict):
            r = {**r, "id": prefix + r["id"]}
        lines.append(r if isinstance(r, str) else _json.dumps(r))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"RS_{month}.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(("\n".join(lines) + "\n").encode()))
    return path


def _ids(manifest: str) -> list[str]:
    rel = Path(manifest).parent
    return sorted(i for p in (rel / "data").glob("*.parquet") for i in pq.read_table(p).column("post_id").to_pylist())


def test_rebuild_reads_only_new_dumps_and_names_its_parent(prefect_harness, tmp_path, capsys):
    from flows.cli import main
    from sources.demo import DemoSpec, write_demo_dump
    from tests.builds import rebuild

    dumps, wh = tmp_path / "dumps", tmp_path / "wh"
    write_demo_dump(dumps, DemoSpec(posts=300, month="2024-01"))
    first = rebuild([str(dumps)], str(wh), str(CONFIG), shard_lines=100, workers=0)
    v1 = json.loads(Path(first["release"]["manifest"]).read_text())
    assert v1["version"] == "v1" and "parent" not in v1

    capsys.readouterr()
    assert main(["rebuild", "--input", str(dumps), "--warehouse", str(wh), "--config", str(CONFIG),
                 "--shard-lines", "100", "--workers", "0"]) == 0
    said = capsys.readouterr().out
    assert said.count("up to date: express-demo/v1 already has these inputs") == 1, said  # said once
    assert not (wh / "express-demo" / "v2").exists()

    feb = _month_dump(dumps, "2024-02", 200, 99, "f")
    second = rebuild([str(dumps)], str(wh), str(CONFIG), shard_lines=100, workers=0)
    v2 = json.loads(Path(second["release"]["manifest"]).read_text())
    assert v2["version"] == "v2" and v2["parent"] == "express-demo/v1"
    assert [i["path"] for i in v2["incremental"]["new_inputs"]] == [str(feb.resolve())]
    assert [i["sha256"] for i in v2["inputs"]][:1] == [i["sha256"] for i in v1["inputs"]]
    run = wh / "runs" / v2["run_id"] / "shards"
    assert sorted(p.name for p in run.glob("*.done")) == ["split-RS_2024-02.done"]  # January not re-read
    assert set(_ids(first["release"]["manifest"])) < set(_ids(second["release"]["manifest"]))
    assert v2["funnel"]["read"] == v1["funnel"]["read"] + 200 + 6  # February's posts and malformed lines
    f = v2["funnel"]
    assert f["read"] == f["kept"] + sum(f["dropped"].values()) + f["malformed"]

    stricter = tmp_path / "stricter.toml"
    stricter.write_text(CONFIG.read_text().replace("max_masks = 5", "max_masks = 1"))
    third = rebuild([str(dumps)], str(wh), str(stricter), shard_lines=100, workers=0)
    v3 = json.loads(Path(third["release"]["manifest"]).read_text())
    assert v3["parent"] == "express-demo/v2" and v3["incremental"]["new_inputs"] == []
    assert v3["incremental"]["relabelled_because"] == ["extract config"]
    assert v3["funnel"]["read"] == v2["funnel"]["read"] and v3["funnel"]["dropped"]["too_many_masks"] > 0
    assert not list((wh / "runs" / v3["run_id"] / "shards").glob("split-*.done"))


def test_publish_flow_runs_alone_on_a_built_run_and_its_release_gets_a_report_and_card(prefect_harness, demo_dump, tmp_path):
    from flows.build import publish_flow
    from pipeline.release_docs import write_card, write_report
    from warehouse.layout import Warehouse
    from tests.builds import build

    wh = tmp_path / "wh"
    built = build([str(demo_dump)], str(wh), str(CONFIG), shard_lines=400, workers=0, publish=False)
    assert built["release"] is None and not list(wh.glob("express-demo/v*"))
    rel = publish_flow(str(wh), built["run_id"])
    again = publish_flow(str(wh), built["run_id"])
    assert again["version"] == rel["version"] == "v1" and again.get("already_published") is True
    report = write_report(Warehouse.at(wh), "express-demo/v1", str(tmp_path / "report.html"))
    assert "<html" in report.read_text().lower()
    card = write_card(Warehouse.at(wh), "express-demo/v1", str(tmp_path / "card"))
    assert Path(card["readme"]).exists()
    assert len(list((tmp_path / "card" / "data").glob("*.parquet"))) >= 3


def test_a_second_rebuild_of_a_dataset_stops_at_once_naming_the_running_one(prefect_harness, demo_dump, tmp_path):
    import os

    import pytest

    from common.locking import LockTimeout, file_lock
    from tests.builds import rebuild
    from warehouse.layout import Warehouse

    wh = Warehouse.at(tmp_path / "wh")
    with file_lock(wh.dataset_dir("express-demo") / ".rebuild.lock"):  # "the first rebuild" is this test
        with pytest.raises(LockTimeout, match=rf"another rebuild of express-demo \(pid {os.getpid()}\)"):
            rebuild([str(demo_dump)], str(wh.root), str(CONFIG), shard_lines=400, workers=0)
    assert not list(wh.root.glob("runs/*")), "nothing may be started while another rebuild runs"


def test_a_second_build_of_the_same_run_stops_at_once_and_leaves_it_alone(prefect_harness, demo_dump, tmp_path):
    import os

    import pytest

    from common.locking import LockTimeout, file_lock
    from tests.builds import build
    from warehouse.layout import Warehouse

    wh = Warehouse.at(tmp_path / "wh")
    with file_lock(wh.run_dir("run-a") / "run.lock"):
        with pytest.raises(LockTimeout, match=rf"another build of run run-a \(pid {os.getpid()}\)"):
            build([str(demo_dump)], str(wh.root), str(CONFIG), 400, run_id="run-a", workers=0)
        assert not (wh.run_dir("run-a") / "shards").exists()
