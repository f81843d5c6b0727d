"""One run of the build: its id, its folder and saved recipe, its lock, and its inputs.

A run id is derived from what the run reads and how (inputs, recipe, shard size, code version), so
the same command after a kill finds the same run folder and resumes it from its markers.
"""
from __future__ import annotations

import hashlib
import json
import os
import uuid
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from common.checksums import sha256_file
from common.errors import InputError
from common.files import is_temp, write_json
from common.locking import file_lock
from common.versioning import code_version
from schemas.config import ConfigError, Recipe, load_recipe, recipe_from_dict
from warehouse.layout import RunPaths, Warehouse

DUMP_PATTERNS = ("*.zst", "*.jsonl", "*.ndjson")


def save_recipe(recipe: Recipe, path: Path) -> Path:
    write_json(path, recipe.to_dict())
    return path


def load_saved_recipe(path: str | Path) -> Recipe:
    """The recipe a run saved (`recipe.json`), as every step of the run reads it."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the saved recipe: {exc}") from exc
    return recipe_from_dict(data, str(path))


def load_any_recipe(config: str | None) -> Recipe:
    """A recipe TOML, or the `recipe.json` a run saved (to resume a run by its id alone)."""
    return load_saved_recipe(config) if config and config.endswith(".json") else load_recipe(config)


def derive_run_id(*parts: str) -> str:
    """The one run-id scheme: a hash of what the run reads and how, plus the code version."""
    h = hashlib.sha256()
    for part in (*parts, code_version()):
        h.update(part.encode())
        h.update(b"\0")
    return f"run-{h.hexdigest()[:16]}"


def input_fingerprint(path: str) -> str:
    """Path, size and mtime: cheap, and enough to tell a rerun of the same command (no hashing)."""
    st = Path(path).stat()
    return f"{Path(path).resolve()}|{st.st_size}|{st.st_mtime_ns}"


def build_run_id(inputs: list[str], recipe: Recipe, shard_lines: int, review: dict[str, Any] | None = None,
                 takedowns: dict[str, Any] | None = None) -> str:
    """A build's id; `review` and `takedowns` are the ledger states the run applies (new decisions
    or takedowns: a new run)."""
    return derive_run_id(*map(input_fingerprint, inputs), json.dumps(recipe.to_dict(), sort_keys=True),
                         str(shard_lines), (review or {}).get("sha256", ""), *takedown_part(takedowns))


def takedown_part(takedowns: dict[str, Any] | None) -> list[str]:
    """What the takedown ledger adds to a run id: nothing when it is empty, so the ids of builds
    that honour no takedown stay as they were."""
    return [f"takedowns:{takedowns['sha256']}"] if takedowns else []


def expand_inputs(inputs: list[str]) -> list[str]:
    """Files in the given order, a folder as its dump files (sorted by name); each file once."""
    out: list[str] = []
    for p in map(Path, inputs):
        if p.is_dir():
            out.extend(sorted(str(f) for pat in DUMP_PATTERNS for f in p.glob(pat) if not is_temp(f)))
        else:
            out.append(str(p))
    return list(dict.fromkeys(out))


def check_inputs(inputs: list[str]) -> None:
    """Every input exists, is a file (or a folder of dumps) and can be opened: said before a flow starts."""
    for p in map(Path, inputs):
        if p.is_dir():
            continue
        if not p.exists():
            raise InputError(f"{p}: no such file")
        if not p.is_file():
            raise InputError(f"{p}: not a file")
        if not os.access(p, os.R_OK):
            raise InputError(f"{p}: not readable (permission denied)")
        if not any(p.match(pattern) for pattern in DUMP_PATTERNS):
            raise InputError(f"{p}: not a dump this build reads (a file of one Reddit post as JSON a line: "
                             f"{', '.join(DUMP_PATTERNS)}); decompress or convert it first")


def input_record(path: str, sha256: str | None = None) -> dict[str, Any]:
    """Manifest entry of one raw input: path and sha256 (computed unless given), plus the query of a
    praw pull (never credentials)."""
    p = Path(path)
    entry: dict[str, Any] = {"path": str(p.resolve()), "sha256": sha256 or sha256_file(p)}
    sidecar = p.with_suffix(".query.json")
    if sidecar.is_file():
        entry["kind"] = "praw"
        entry["query"] = json.loads(sidecar.read_text())
    return entry


def open_run(wh: Warehouse, run_id: str, recipe: Recipe, inputs: list[str], shard_lines: int) -> RunPaths:
    """Create or reopen a run folder (its `run.json` written once, its recipe saved); refuse to
    resume a run started with another recipe or shard size."""
    run = wh.run(run_id)
    run_dir, path = run.root, run.run_file
    facts = {"run_id": run_id, "inputs": [str(Path(p).resolve()) for p in inputs], "shard_lines": shard_lines,
             "config": recipe.to_dict()}
    if path.exists():
        facts = json.loads(path.read_text())
    else:
        write_json(path, {**facts, "nonce": uuid.uuid4().hex})
    if facts["shard_lines"] != shard_lines or facts["config"] != recipe.to_dict():
        raise ConfigError(f"run {run_id} was started with another recipe or shard size; use a new run id")
    if not run.recipe.exists():
        save_recipe(recipe, run.recipe)
    print(f"[run] {run_id} -> {run_dir}", flush=True)
    return run


def run_facts(wh: Warehouse, run_id: str) -> dict[str, Any]:
    """What a run recorded when it started (inputs, shard size, recipe), to resume it by id alone."""
    path = wh.run(run_id).run_file
    if not path.exists():
        raise InputError(f"no run '{run_id}' in {wh.runs}")
    return json.loads(path.read_text())


def run_lock(run: RunPaths) -> AbstractContextManager[Any]:
    """Held while a process builds or publishes a run: two at once would write the same shard files
    (or publish twice), so the second stops at once, naming the holder's pid. A killed holder's lock
    is released by the kernel, so resuming after kill -9 is never blocked."""
    return file_lock(run.lock, timeout=0, holder=f"another build of run {run.root.name}")


def praw_inputs(recipe: Recipe, out_dir: str) -> Any:
    """Pull the live results the recipe's [sources] asks for that are newer than the stored
    checkpoint (sources/praw_pulls.py); the result's `files` are every pull file of that query, what a
    build reads, its `path` the new one alone."""
    from sources.praw_pulls import pull
    from sources.praw_source import search_terms

    return pull(recipe.sources, search_terms(recipe.sources), out_dir)
