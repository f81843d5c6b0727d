"""One owner of each file name: the names of a warehouse's, a run's, a release's, an evaluation's
and a shard's files are spelled in their path owners (warehouse/layout.py, pipeline/shards.py) and
nowhere else in the library; every other module asks the owner. Read from the source, as
tests/test_layering.py reads imports."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OWNERS = ("warehouse/layout.py", "pipeline/shards.py")
LIBRARY = ("common", "schemas", "privacy", "sources", "filters", "extractors", "warehouse", "review", "pipeline",
           "evaluation", "takedowns", "flows")
FILE_NAME = re.compile(r"^[\w.-]+\.(json|jsonl|parquet|duckdb|md|html|zst|txt|lock)$")
# Names an owner gives that also name a file of something else, where the same word means that thing
FOREIGN = {("evaluation/predictors/hf_chat.py", "config.json"): "a Hugging Face model folder's config",
           ("pipeline/release_docs.py", "README.md"): "the card folder's README, which warehouse/pages/card.py writes",
           ("warehouse/pages/card.py", "README.md"): "the card folder's README (a Hugging Face dataset card)"}


def constants(path: Path) -> list[tuple[int, str]]:
    return [(node.lineno, node.value) for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and FILE_NAME.match(node.value)]


def owned_names() -> set[str]:
    return {name for owner in OWNERS for _, name in constants(ROOT / owner)}


def test_the_owners_name_the_files_they_own():
    assert {"manifest.json", "predictions.jsonl", "posts.parquet", "lines.jsonl.zst", "run.json"} <= owned_names()


def test_no_module_but_a_path_owner_names_a_file_an_owner_owns():
    owned, found = owned_names(), []
    for folder in LIBRARY:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in OWNERS:
                continue
            found += [f"{rel}:{line}: {name!r}" for line, name in constants(path)
                      if name in owned and (rel, name) not in FOREIGN]
    assert not found, "ask the path owner instead:\n" + "\n".join(found)
