"""The folder rules of docs/extending.md: what each folder may import of ours, with no exceptions,
and no Prefect outside flows/. Imports are read from the source (module level and inside functions
alike)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OURS = ("common", "schemas", "privacy", "sources", "filters", "extractors", "warehouse", "review", "pipeline",
        "evaluation", "flows")
LOW = {"common", "schemas"}
MAY_IMPORT = {"common": set(), "schemas": {"common"}, "privacy": LOW, "sources": LOW,
              "filters": LOW | {"privacy"}, "extractors": LOW, "warehouse": LOW | {"privacy"},
              "review": LOW | {"warehouse", "extractors"},
              "pipeline": LOW | {"privacy", "sources", "filters", "extractors", "warehouse", "review"},
              "evaluation": LOW | {"warehouse"}}


def imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def test_each_folder_imports_only_what_it_may():
    broken = []
    for folder, allowed in MAY_IMPORT.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for line, module in imports(path):
                top = module.split(".")[0]
                if top in OURS and top != folder and top not in allowed:
                    broken.append(f"{rel}:{line}: {folder}/ imports {module}")
    assert not broken, "\n".join(broken)


def test_only_flows_import_prefect():
    found = [f"{path.relative_to(ROOT)}:{line}: {module}"
             for folder in MAY_IMPORT for path in sorted((ROOT / folder).rglob("*.py"))
             for line, module in imports(path) if module.split(".")[0] in ("prefect", "prefect_dask")]
    assert not found, "\n".join(found)


def test_every_folder_of_ours_has_a_rule():
    """A new top-level package gets its row here (and in docs/extending.md) before it lands."""
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "bench"}
    assert packages <= set(OURS), sorted(packages - set(OURS))
    assert set(MAY_IMPORT) | {"flows"} == set(OURS)
