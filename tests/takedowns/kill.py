"""For the kill test of `express takedown apply`: the process held at a chosen rename, and a
warehouse's content compared with another's (its own path, times and nonces left out)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq

from tests.takedowns.conftest import REPO
from warehouse.releases.catalog import list_views
from warehouse.layout import Warehouse

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


def env() -> dict[str, str]:
    from prefect.settings import PREFECT_API_URL

    return {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "PYTHONPATH": str(REPO)}


def normal(value, root: str):
    if isinstance(value, dict):
        return {k: normal(v, root) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normal(v, root) for v in value]
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
        elif rel.parts[0] == "cache":  # what was read, keyed by each file's path and times
            out[str(rel)] = "(present)"
        elif path.name == "manifest.json.sha256":  # the hash of a manifest whose times differ by run
            out[str(rel)] = "(present)"
        elif set(rel.parts) & set(NAMES_ONLY) or path.suffix in (".html", ".md", ".png", ".svg"):
            out[str(rel)] = "(present)"
        elif path.name == "catalog.duckdb":
            out[str(rel)] = list_views(Warehouse(root))
        elif path.suffix == ".parquet":
            out[str(rel)] = normal(pq.read_table(path).to_pylist(), str(root))
        elif path.suffix in (".json", ".done"):
            out[str(rel)] = normal(json.loads(path.read_text()), str(root))
        elif path.suffix == ".jsonl":
            out[str(rel)] = [normal(json.loads(x), str(root)) for x in path.read_text().splitlines() if x.strip()]
        else:
            out[str(rel)] = path.read_bytes()
    return out
