"""The build on more than one process, for real: a `dask scheduler` and two `dask worker` processes
on 127.0.0.1 reached through --dask-address, and local workers under the temporary Prefect API the
CLI starts when PREFECT_API_URL is unset. Both publish the same release bytes as the in-process
build of the demo fixture."""
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)

REPO = Path(__file__).resolve().parents[2]
CONFIG = str(REPO / "configs" / "demo.toml")
BIN = Path(sys.executable).parent


def _data_hashes(manifest: str | Path) -> dict[str, str]:
    rel = Path(manifest).parent
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((rel / "data").glob("*.parquet"))}


def _build(dump: Path, wh: Path, *extra: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flows.cli", "build", "--input", str(dump), "--config", CONFIG,
                           "--warehouse", str(wh), "--shard-lines", "200", *extra], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=400)


@pytest.fixture
def dask_cluster(prefect_harness, tmp_path):
    """A scheduler and two single-threaded workers, each its own process, that import our code and
    report to the test session's Prefect API."""
    from prefect.settings import PREFECT_API_URL

    env = {**os.environ, "PYTHONPATH": str(REPO), "PREFECT_API_URL": PREFECT_API_URL.value(),
           "DASK_LOGGING__DISTRIBUTED": "warning"}
    info = tmp_path / "scheduler.json"
    procs = [subprocess.Popen([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
                               "--no-dashboard", "--scheduler-file", str(info)], cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 60
        while not info.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert info.exists(), "the scheduler did not start"
        for k in range(2):
            procs.append(subprocess.Popen([str(BIN / "dask"), "worker", "--scheduler-file", str(info), "--nthreads", "1",
                                           "--nworkers", "1", "--no-dashboard", "--host", "127.0.0.1",
                                           "--name", f"w{k}"], cwd=REPO, env=env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        from distributed import Client

        address = json.loads(info.read_text())["address"]
        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=90)
        yield address, env
    finally:
        for group in (procs[1:], procs[:1]):  # the workers leave while their scheduler still answers them
            for p in group:
                p.terminate()
            for p in group:
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()


def test_a_build_on_a_dask_cluster_publishes_the_same_bytes_as_in_process(dask_cluster, demo_build, demo_dump,
                                                                          tmp_path):
    address, env = dask_cluster
    proc = _build(demo_dump, tmp_path / "wh", "--dask-address", address, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    manifest = proc.stdout.strip().splitlines()[-1]
    m = json.loads(Path(manifest).read_text())
    assert m["shards"] == 5
    assert _data_hashes(manifest) == _data_hashes(demo_build["release"]["manifest"])
    # on a cluster the gate's PII scans ran on its workers, one per shard, and the gate used them
    run = Path(manifest).parents[2] / "runs" / m["run_id"] / "pii-prescan"
    assert len(list(run.glob("*.parquet"))) == 5 and m["gate"]["pii"]["texts_from_prescan"] > 0
    from distributed import Client  # the shard tasks ran on the cluster, on both of its workers

    with Client(address, timeout=30) as client:
        executed = client.run(lambda dask_worker: dask_worker.state.executed_count)
    assert len(executed) == 2 and all(n > 0 for n in executed.values()), executed


def test_local_workers_under_the_clis_temporary_prefect_api_publish_the_same_bytes(demo_build, demo_dump, tmp_path,
                                                                                    prefect_home):
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env.update(PYTHONPATH=str(REPO), PREFECT_HOME=str(prefect_home))
    started = time.time()
    proc = _build(demo_dump, tmp_path / "wh", "--workers", "2", env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    manifest = proc.stdout.strip().splitlines()[-1]
    assert _data_hashes(manifest) == _data_hashes(demo_build["release"]["manifest"])
    # two local workers run the gate's PII scans themselves, and the gate still uses every one
    assert json.loads(Path(manifest).read_text())["gate"]["pii"]["texts_from_prescan"] > 0
    # the temporary API's database was the test's home's, not ours
    assert max(f.stat().st_mtime for f in prefect_home.glob("prefect.db*")) >= started
