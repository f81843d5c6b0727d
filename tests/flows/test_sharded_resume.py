"""The sharded build for real: kill -9 mid-build, rerun the same command, and get a release whose
data files are byte-identical to an uninterrupted build (and to a one-shard build)."""
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)

REPO = Path(__file__).resolve().parents[2]
CONFIG = str(REPO / "configs" / "demo.toml")
SHARD_LINES = 150  # six shards of the demo dump


def _data_hashes(manifest: str | Path) -> dict[str, str]:
    rel = Path(manifest).parent
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((rel / "data").glob("*.parquet"))}


def _cli(dump: Path, warehouse: Path, workers: int) -> list[str]:
    return [sys.executable, "-m", "flows.cli", "build", "--input", str(dump), "--config", CONFIG,
            "--warehouse", str(warehouse), "--shard-lines", str(SHARD_LINES), "--workers", str(workers)]


# `express build` in a process that stops just before writing its fourth extract.done marker (a
# marker is renamed into place once complete), held there until the test kills it.
HOLD_BEFORE_FOURTH_EXTRACT = """
import os, sys, threading
from pathlib import Path

real_replace, written, lock = os.replace, [], threading.Lock()

def replace(src, dst, *args, **kwargs):
    if Path(dst).name == "extract.done":
        with lock:
            hold = len(written) >= 3
            written.append(dst)
        if hold:
            threading.Event().wait()
    return real_replace(src, dst, *args, **kwargs)

os.replace = replace
sys.argv = ["express", *sys.argv[1:]]
from flows.cli import entry
sys.exit(entry())
"""


def _env() -> dict[str, str]:
    from prefect.settings import PREFECT_API_URL

    return {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "PYTHONPATH": str(REPO)}


@pytest.fixture(scope="module")
def sharded_demo(prefect_harness, demo_dump, tmp_path_factory):
    """The uninterrupted sharded build that the killed and resumed one must match."""
    from tests.builds import build

    return build([str(demo_dump)], str(tmp_path_factory.mktemp("sharded") / "wh"), CONFIG,
                      shard_lines=SHARD_LINES, workers=0)


def test_a_build_in_six_shards_matches_the_one_shard_build(demo_build, sharded_demo):
    built = sharded_demo
    assert built["shards"] == 6
    plain = json.loads(Path(demo_build["release"]["manifest"]).read_text())
    sharded = json.loads(Path(built["release"]["manifest"]).read_text())
    assert sharded["funnel"] == plain["funnel"] and sharded["stages"] == plain["stages"]
    assert _data_hashes(built["release"]["manifest"]) == _data_hashes(demo_build["release"]["manifest"])
    pii = sharded["gate"]["pii"]  # each shard's texts were PII-scanned while the next ones were extracted
    assert len(list((Path(built["release"]["path"]).parents[1] / "runs" / built["run_id"] / "pii-prescan")
                    .glob("*.parquet"))) == 6
    assert pii["texts_from_prescan"] == 2 * pii["rows_checked"] > 0


def test_a_build_is_one_flow_run_whose_shard_work_ends_before_the_run_is_assembled(sharded_demo):
    """The shard work runs on a task runner the build enters around it only (and so its Dask
    workers with their spaCy models are gone before assembling, the quality gate and publishing
    start); a build is one flow run, with no child flow run (each would end up to 1 s late, joining
    Prefect's heartbeat thread)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterParentFlowRunId,
        TaskRunFilter,
        TaskRunFilterFlowRunId,
    )

    parent = sharded_demo["flow_run_id"]
    deadline = time.monotonic() + 30  # the server records task runs from their events, a moment after they end
    with get_client(sync_client=True) as client:
        while True:
            tasks = client.read_task_runs(
                task_run_filter=TaskRunFilter(flow_run_id=TaskRunFilterFlowRunId(any_=[parent])))
            recorded = all(t.end_time for t in tasks) and any(t.name.startswith("publish-run") for t in tasks)
            if recorded or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        children = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[parent])))
    assert children == []
    kinds = {t.name.split("-", 1)[0] for t in tasks}
    shard_steps = {"split", "filter", "dedupe", "extract", "prescan", "ingest"}
    assert shard_steps | {"assemble", "publish"} <= kinds
    shard_work = [t for t in tasks if t.name.split("-", 1)[0] in shard_steps]
    (assemble,) = [t for t in tasks if t.name.startswith("assemble")]
    (publish,) = [t for t in tasks if t.name.startswith("publish-run")]
    assert max(t.end_time for t in shard_work) <= assemble.start_time <= publish.start_time


def test_the_shard_work_task_runner_is_left_before_the_run_is_assembled(prefect_harness, demo_dump, tmp_path,
                                                                        monkeypatch):
    """The task runner of the shard work (local Dask workers, each with a spaCy model) is shut
    down before the assemble step starts: the workers and the gate never hold memory together."""
    from prefect.task_runners import ThreadPoolTaskRunner

    import flows.build as build_module
    from pipeline.assemble import AssembleStep
    from tests.builds import build

    events: list[str] = []

    class Recorded(ThreadPoolTaskRunner):
        def __exit__(self, *exc):
            events.append("shard runner left")
            return super().__exit__(*exc)

        def duplicate(self):
            return Recorded(max_workers=self._max_workers)

    assemble = AssembleStep.run

    def assemble_run(self, *args, **kwargs):
        events.append("assemble")
        return assemble(self, *args, **kwargs)

    monkeypatch.setattr(build_module, "task_runner", lambda workers, address: Recorded(max_workers=1))
    monkeypatch.setattr(AssembleStep, "run", assemble_run)
    built = build([str(demo_dump)], str(tmp_path / "wh"), CONFIG, shard_lines=SHARD_LINES, workers=0)
    assert built["release"] and events == ["shard runner left", "assemble"]


def test_kill_9_mid_build_then_rerun_publishes_identical_data(prefect_harness, demo_dump, sharded_demo, tmp_path):
    """The build is held (in its own process) just before its fourth `extract.done` marker, so the
    kill lands mid-build with exactly three shards extracted, however fast or busy the host is."""
    killed_wh = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-c", HOLD_BEFORE_FOURTH_EXTRACT, *_cli(demo_dump, killed_wh, 0)[3:]],
                            cwd=REPO, env=_env(), start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300  # a hang guard: the three markers come as fast as the host allows
    try:
        while len(list(killed_wh.glob("runs/*/shards/*/extract.done"))) < 3:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read().decode()[-2000:]
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    shard_dirs = [p for p in killed_wh.glob("runs/*/shards/*") if p.is_dir()]
    done = [p for p in shard_dirs if (p / "extract.done").exists()]
    assert len(done) == 3 < len(shard_dirs) == 6, "the kill must land mid-build"
    assert not list(killed_wh.glob("express-demo/v*/manifest.json"))
    stamps = {p: (p / "filter.done").stat().st_mtime_ns for p in shard_dirs}

    rerun = subprocess.run(_cli(demo_dump, killed_wh, 0), cwd=REPO, env=_env(), capture_output=True, text=True,
                           timeout=240)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    manifest = rerun.stdout.strip().splitlines()[-1]
    assert "skipped (done before)" in rerun.stderr
    assert {p: (p / "filter.done").stat().st_mtime_ns for p in shard_dirs} == stamps  # finished shards untouched
    assert [p.parent.name for p in killed_wh.glob("express-demo/v*/manifest.json")] == ["v1"]

    assert _data_hashes(manifest) == _data_hashes(sharded_demo["release"]["manifest"])  # the same build, never killed
    resumed, uninterrupted = json.loads(Path(manifest).read_text()), sharded_demo["release"]["manifest"]
    assert resumed["funnel"] == json.loads(Path(uninterrupted).read_text())["funnel"]
    f = resumed["funnel"]
    assert f["read"] == f["kept"] + sum(f["dropped"].values()) + f["malformed"]


def test_shards_are_filtered_while_the_rest_of_the_input_is_still_being_split(prefect_harness, demo_dump, tmp_path,
                                                                                 monkeypatch):
    """The split runs on a thread of its own beside the flow's task runner: with a single task
    thread (one worker), the first shard is filtered while the split is still running. The split
    is held before finishing its second shard until the first shard's filter.done marker exists:
    a build that filtered only after the whole split would never write it (the hold gives up after
    120 s and the split ends first)."""
    from prefect import flow
    from prefect.task_runners import ThreadPoolTaskRunner

    from flows.build import StepRunner, _split_and_filter
    from pipeline import split as split_step
    from pipeline.plan import BuildRequest, open_build, plan_build

    run = open_build(plan_build(BuildRequest(tmp_path / "wh", [str(demo_dump)], CONFIG, 150, workers=0)))
    close, closed = split_step._ShardFile.close, []  # per shard closed: (any filter.done, the split's marker) then
    deadline = time.monotonic() + 120  # one hold in all, for a split that never sees a shard filtered

    def close_once_the_first_shard_is_filtered(self):
        if closed:
            while not list(run.shards_dir.glob("*/filter.done")) and time.monotonic() < deadline:
                time.sleep(0.01)
        closed.append((bool(list(run.shards_dir.glob("*/filter.done"))), bool(list(run.shards_dir.glob("split-*.done")))))
        return close(self)

    monkeypatch.setattr(split_step._ShardFile, "close", close_once_the_first_shard_is_filtered)

    @flow(name="split-and-filter")
    def split_and_filter():
        with ThreadPoolTaskRunner(max_workers=1) as one_worker:
            splits, filtering = _split_and_filter(run, StepRunner(one_worker))
            return splits, [f.result() for f in filtering.values()]

    (split,), filtered = split_and_filter()
    assert len(split.shards) == len(closed) >= 4 and len(filtered) == len(split.shards)
    assert (run.shards_dir / f"split-{split.stem}.done").exists()
    assert closed[0] == (False, False)  # the first shard: nothing filtered yet
    assert closed[1] == (True, False)  # the second: the first was filtered, and the split was still running


def test_a_truncated_dump_stops_the_sharded_build_naming_the_file_and_publishes_nothing(prefect_harness, demo_dump,
                                                                                       tmp_path):
    """Shards written before the damage may already be filtered (filtering starts during the
    split); the build still stops with the dump's name and no release or catalog view appears."""
    from sources.dumps import DumpError
    from tests.builds import build
    from warehouse.releases.catalog import list_views
    from warehouse.layout import Warehouse

    broken = tmp_path / "RS_2024-01.zst"
    data = demo_dump.read_bytes()
    broken.write_bytes(data[: len(data) * 3 // 4])
    wh = tmp_path / "wh"
    with pytest.raises(DumpError, match=r"RS_2024-01\.zst.*truncated"):
        build([str(broken)], str(wh), CONFIG, shard_lines=100, workers=0)
    assert not list(wh.glob("express-demo/v*"))
    assert list_views(Warehouse.at(wh)) == []


def test_the_ingest_quarantine_joined_while_extracting_is_kept_until_one_of_its_parts_changes(sharded_demo):
    """The run's ingest quarantine is joined on the flow process once dedupe is done (the workers
    are extracting); assemble keeps it, and the same call after a part changed joins it again."""
    import pyarrow.parquet as pq

    from pipeline.assemble import JoinIngestQuarantine, RunTables
    from pipeline.results import AssembleResult
    from pipeline.steps import read_marker, run_step
    from warehouse.layout import Warehouse

    wh = Warehouse.of_release(Path(sharded_demo["release"]["path"]))
    run = wh.run(sharded_demo["run_id"])
    out = Path(sharded_demo["ingest"]["quarantine"])
    funnel = sharded_demo["ingest"]["funnel"]
    rows = pq.read_metadata(out).num_rows
    assert rows == sum(funnel["dropped"].values()) + funnel["malformed"] > 0
    shards = AssembleResult.from_marker(read_marker(run.root, "assemble")).shard_list
    assert read_marker(run.root, "ingest-quarantine")["rows"] == rows
    tables = RunTables(run, out.parent, shards)
    written = out.stat().st_mtime_ns
    again = run_step(JoinIngestQuarantine, tables, str(run.recipe))
    assert again.skipped and again.rows == rows
    assert out.stat().st_mtime_ns == written  # nothing changed: not joined again
    part = shards[2].quarantine("ingest")
    os.utime(part, ns=(part.stat().st_atime_ns, part.stat().st_mtime_ns + 10**9))  # as a re-filtered shard
    joined = run_step(JoinIngestQuarantine, tables, str(run.recipe))
    assert not joined.skipped and joined.rows == rows
    assert out.stat().st_mtime_ns != written
