"""The library touches no library's private insides: no underscore name imported from or read off
another package, no private setting or environment flag, no module-level state of a library
replaced. Where no public way exists, the access is listed here with the version guard that
refuses a version it does not know (and that guard has its own test)."""
from __future__ import annotations

import ast
from pathlib import Path

from tests.test_layering import MAY_IMPORT, OURS, ROOT

# Private names that a grep for them must never find in the library.
NEVER = ("GLOBAL_SETTINGS_CONTEXT", "_LazyModule", "PREFECT__")
# (file, attribute): private attributes read or set under a version guard.
GUARDED = {
    ("sources/praw_source.py", "_read_only_core"): "switch_off_retries (KNOWN_RETRY_INSIDES)",
    ("sources/praw_source.py", "_authorized_core"): "switch_off_retries (KNOWN_RETRY_INSIDES)",
    ("sources/praw_source.py", "_retry_strategy_class"): "switch_off_retries (KNOWN_RETRY_INSIDES)",
}
LIBRARY_FOLDERS = [*MAY_IMPORT, "flows"]
# Names with a leading underscore that their library documents as public.
DOCUMENTED = {"_exit", "_asdict", "_replace", "_fields", "_make"}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _our_classes() -> set[str]:
    """Private names our own classes define: reading them off another instance of ours is fine."""
    names = set()
    for folder in LIBRARY_FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _private(node.name):
                    names.add(node.name)
                elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                        and node.value.id in ("self", "cls") and _private(node.attr):
                    names.add(node.attr)
    return names


def findings(path: Path, ours: set[str], root: Path = ROOT) -> list[str]:
    rel = path.relative_to(root).as_posix()
    source = path.read_text(encoding="utf-8")
    out = [f"{rel}: {word}" for word in NEVER if word in source]
    for node in ast.walk(ast.parse(source, rel)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.split(".")[0] not in OURS:
            parts = node.module.split(".")
            out += [f"{rel}:{node.lineno}: from {node.module} import {a.name}" for a in node.names if _private(a.name)]
            out += [f"{rel}:{node.lineno}: from {node.module}" for p in parts if _private(p)]
        elif isinstance(node, ast.Import):
            out += [f"{rel}:{node.lineno}: import {a.name}" for a in node.names
                    if a.name.split(".")[0] not in OURS and any(_private(p) for p in a.name.split("."))]
        elif isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in ours | DOCUMENTED \
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")) \
                and (rel, node.attr) not in GUARDED:
            out.append(f"{rel}:{node.lineno}: .{node.attr}")
    return out


def test_the_library_reads_no_private_name_of_another_package():
    ours = _our_classes()
    found = [f for folder in LIBRARY_FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))
             for f in findings(path, ours)]
    assert not found, "\n".join(found)


def test_the_check_finds_what_it_looks_for(tmp_path):
    """(The probe is written outside the repository: the layering tests read every module there.)"""
    bad = tmp_path / "flows" / "_private_probe_for_a_test.py"
    bad.parent.mkdir()
    bad.write_text("import prefect.context\nfrom prefect.settings import _private\nimport importlib._bootstrap\n"
                   "prefect.context.GLOBAL_SETTINGS_CONTEXT = None\nx = prefect._internal\nenv = 'PREFECT__SERVER_FINAL'\n")
    found = findings(bad, _our_classes(), root=tmp_path)
    assert len(found) == 5, found  # the replaced global once, by name
