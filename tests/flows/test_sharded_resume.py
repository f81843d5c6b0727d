"""The sharded build for real: kill -9 mid-build, rerun the same command, and get a release whose
data files are byte-identical to an uninterrupted build (and to the unsharded build)."""
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONFIG = str(REPO / "configs" / "demo.toml")
SHARD_LINES = 60


def _data_hashes(manifest: str | Path) -> dict[str, str]:
    rel = Path(manifest).parent
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((rel / "data").glob("*.parquet"))}


def _cli(dump: Path, warehouse: Path, workers: int) -> list[str]:
    return [sys.executable, "-m", "flows.cli", "build-sharded", "--input", str(dump), "--config", CONFIG,
            "--warehouse", str(warehouse), "--shard-lines", str(SHARD_LINES), "--workers", str(workers)]


def _env() -> dict[str, str]:
    from prefect.settings import PREFECT_API_URL

    return {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "PYTHONPATH": str(REPO)}


def test_sharded_build_matches_the_unsharded_build(demo_build, demo_dump, tmp_path):
    from flows.sharded import run_sharded_build

    built = run_sharded_build([str(demo_dump)], str(tmp_path / "wh"), CONFIG, shard_lines=150, workers=0)
    assert built["shards"] == 6
    plain = json.loads(Path(demo_build["release"]["manifest"]).read_text())
    sharded = json.loads(Path(built["release"]["manifest"]).read_text())
    assert sharded["funnel"] == plain["funnel"] and sharded["stages"] == plain["stages"]
    assert _data_hashes(built["release"]["manifest"]) == _data_hashes(demo_build["release"]["manifest"])


def test_kill_9_mid_build_then_rerun_publishes_identical_data(prefect_harness, demo_dump, tmp_path):
    from flows.sharded import run_sharded_build

    killed_wh = tmp_path / "killed"
    proc = subprocess.Popen(_cli(demo_dump, killed_wh, 0), cwd=REPO, env=_env(), start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if len(list(killed_wh.glob("runs/*/shards/*/extract.done"))) >= 3:
                break
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    shard_dirs = [p for p in killed_wh.glob("runs/*/shards/*") if p.is_dir()]
    done = [p for p in shard_dirs if (p / "extract.done").exists()]
    assert 3 <= len(done) < len(shard_dirs), "the kill must land mid-build"
    assert not list(killed_wh.glob("express-demo/v*/manifest.json"))
    stamps = {p: (p / "filter.done").stat().st_mtime_ns for p in shard_dirs}

    rerun = subprocess.run(_cli(demo_dump, killed_wh, 2), cwd=REPO, env=_env(), capture_output=True, text=True,
                           timeout=240)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    manifest = rerun.stdout.strip().splitlines()[-1]
    assert "skipped (done before)" in rerun.stderr
    assert {p: (p / "filter.done").stat().st_mtime_ns for p in shard_dirs} == stamps  # finished shards untouched
    assert [p.parent.name for p in killed_wh.glob("express-demo/v*/manifest.json")] == ["v1"]

    clean = run_sharded_build([str(demo_dump)], str(tmp_path / "clean"), CONFIG, SHARD_LINES, workers=0)
    assert _data_hashes(manifest) == _data_hashes(clean["release"]["manifest"])
    resumed, uninterrupted = json.loads(Path(manifest).read_text()), clean["release"]["manifest"]
    assert resumed["funnel"] == json.loads(Path(uninterrupted).read_text())["funnel"]
    f = resumed["funnel"]
    assert f["read"] == f["kept"] + sum(f["dropped"].values()) + f["malformed"]
