"""Prefect cache keys for the sharded build: input content hashes, the recipe, the code version.

Keys never look at DataFrames or clients, only at files named by the task's parameters. Each key
also carries the run folder's nonce, so a deleted and re-created run folder never gets a cached
result that points at files which are gone.
"""
from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

from schemas.lexicon import sha256_file
from schemas.versioning import code_version

RUN_FILE = "run.json"


def ensure_run(run_dir: Path, facts: dict[str, Any]) -> dict[str, Any]:
    """Create the run's `run.json` (with a fresh nonce) once; later calls return it unchanged."""
    path = run_dir / RUN_FILE
    if path.exists():
        return json.loads(path.read_text())
    run_dir.mkdir(parents=True, exist_ok=True)
    data = {**facts, "nonce": uuid.uuid4().hex}
    tmp = path.with_name(".tmp-" + path.name)
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)
    return data


def run_nonce(run_dir: Path) -> str:
    path = run_dir / RUN_FILE
    return json.loads(path.read_text())["nonce"] if path.exists() else "no-run"


def digest(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\0")
    return h.hexdigest()


def _recipe_hash(parameters: dict[str, Any]) -> str:
    recipe = parameters.get("recipe_path")
    return sha256_file(Path(recipe)) if recipe and Path(recipe).exists() else "no-recipe"


def split_cache_key(context: Any, parameters: dict[str, Any]) -> str:
    """Split of one input: its sha256, the shard size, the code version and the run."""
    shards_dir = Path(parameters["shards_dir"])
    return digest("split", sha256_file(Path(parameters["path"])), str(parameters["shard_lines"]),
                   parameters["stem"], code_version(), run_nonce(shards_dir.parent), str(shards_dir))


def shard_cache_key(context: Any, parameters: dict[str, Any]) -> str:
    """Work on one shard: the shard file's sha256, the recipe, the code version and the run."""
    shard = parameters["shard"]
    task_name = context.task.name if context is not None and getattr(context, "task", None) else "shard"
    folder = shard.get("work") or shard["path"]
    run_dir = Path(folder).parent.parent
    joined = [json.dumps(parameters["nsfw_files"])] if parameters.get("nsfw_files") else []  # comment join
    return digest(task_name, shard["sha256"], _recipe_hash(parameters), code_version(), run_nonce(run_dir),
                   folder, *joined)
