"""A killed `express takedown apply` run again gives the same warehouse as one never killed: a real
apply process is held at a chosen point (half-way through rewriting a shard folder; just before the
next release is renamed into place) and killed with SIGKILL, then apply runs again."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.takedowns.conftest import REPO, relocated
from warehouse.catalog import list_views
from warehouse.layout import Warehouse

pytestmark = pytest.mark.slow  # apply processes killed and run again (tests/conftest.py)

VOLATILE = {"created", "time", "nonce", "seconds", "finished"}
NAMES_ONLY = ("reports", "cards")  # pages and charts carry their own dates

# `express takedown apply` in a process that stops when it is about to rename FILE (argv[1]) into
# place (written as HELD, argv[2], first), held there until the test kills it.
HOLD = """
import os, sys, threading
from pathlib import Path

target, held = sys.argv[1], sys.argv[2]
real_replace, real_rename = os.replace, os.rename

def hold(src, dst):
    if Path(dst).name == target and not Path(held).exists():
        Path(held).write_text(str(dst))
        threading.Event().wait()

def replace(src, dst, *args, **kwargs):
    hold(src, dst)
    return real_replace(src, dst, *args, **kwargs)

def rename(src, dst, *args, **kwargs):
    hold(src, dst)
    return real_rename(src, dst, *args, **kwargs)

os.replace, os.rename = replace, rename
sys.argv = ["express", *sys.argv[3:]]
from flows.cli import entry
sys.exit(entry())
"""


def _env() -> dict[str, str]:
    from prefect.settings import PREFECT_API_URL

    return {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "PYTHONPATH": str(REPO)}


def _normal(value, root: str):
    if isinstance(value, dict):
        return {k: _normal(v, root) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_normal(v, root) for v in value]
    if isinstance(value, float):  # sums over sets come out in another order in another process
        return round(value, 9)
    return value.replace(root, "<warehouse>") if isinstance(value, str) else value


def snapshot(root: Path) -> dict[str, object]:
    """Every file of a warehouse by relative path: its content, with the warehouse's own path and
    what changes from run to run (times, a run's nonce) left out."""
    out: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not path.is_file() or path.name.endswith(".lock") or path.name == ".lock":
            continue
        if "gate" in rel.parts:  # GX results and Data Docs, named and stamped by their own clock
            out[str(Path(*rel.parts[:rel.parts.index("gate") + 1]))] = "(present)"
        elif set(rel.parts) & set(NAMES_ONLY) or path.suffix in (".html", ".md", ".png", ".svg"):
            out[str(rel)] = "(present)"
        elif path.name == "catalog.duckdb":
            out[str(rel)] = list_views(Warehouse(root))
        elif path.suffix == ".parquet":
            out[str(rel)] = _normal(pq.read_table(path).to_pylist(), str(root))
        elif path.suffix in (".json", ".done"):
            out[str(rel)] = _normal(json.loads(path.read_text()), str(root))
        elif path.suffix == ".jsonl":
            out[str(rel)] = [_normal(json.loads(x), str(root)) for x in path.read_text().splitlines() if x.strip()]
        else:
            out[str(rel)] = path.read_bytes()
    return out


@pytest.mark.parametrize("held_at", ["extract.done", "v2"], ids=["mid-rewrite-of-a-shard", "before-v2-lands"])
def test_a_killed_apply_run_again_gives_the_same_warehouse(requested, applied, tmp_path, held_at):
    from tests.takedowns.conftest import apply

    root = relocated(requested, tmp_path / "wh")
    flag = tmp_path / "held"
    proc = subprocess.Popen([sys.executable, "-c", HOLD, held_at, str(flag), "takedown", "apply",
                             "--warehouse", str(root)], cwd=REPO, env=_env(), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300
        while not flag.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert flag.exists(), proc.stderr.read().decode() if proc.poll() is not None else "never held"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    if held_at == "extract.done":  # the kill landed half-way through a folder's change
        assert list(root.glob("runs/*/shards/*/.commit-journal.json"))
    else:  # the release was written but not yet in place
        assert list(root.glob("express-demo/.tmp-v2-*")) and not (root / "express-demo" / "v2").exists()
    apply(root)
    assert not list(root.rglob(".commit-journal.json")) and not list(root.glob("express-demo/.tmp-*"))
    assert snapshot(root) == snapshot(applied[0])
