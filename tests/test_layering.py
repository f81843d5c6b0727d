"""The folder rules of docs/extending.md: what each folder may import of ours, and no Prefect
outside flows/. Imports are read from the source (module level and inside functions alike)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OURS = ("schemas", "sources", "filters", "extractors", "pipeline", "warehouse", "evaluation", "flows")
STAGES = {"schemas", "sources", "filters", "extractors", "warehouse"}
MAY_IMPORT = {"schemas": set(), "sources": {"schemas"}, "filters": {"schemas"}, "extractors": {"schemas"},
              "warehouse": {"schemas"}, "pipeline": STAGES, "evaluation": {"schemas", "warehouse"}}
# The one exception, and why: the gate's PII check runs the scrubber's own detectors over the
# released texts (a second, weaker list in warehouse/ would let a leak through).
EXCEPTIONS = {("warehouse/gate_pii.py", "filters")}


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
                if top in OURS and top != folder and top not in allowed and (rel, top) not in EXCEPTIONS:
                    broken.append(f"{rel}:{line}: {folder}/ imports {module}")
    assert not broken, "\n".join(broken)


def test_only_flows_import_prefect():
    found = [f"{path.relative_to(ROOT)}:{line}: {module}"
             for folder in MAY_IMPORT for path in sorted((ROOT / folder).rglob("*.py"))
             for line, module in imports(path) if module.split(".")[0] in ("prefect", "prefect_dask")]
    assert not found, "\n".join(found)


def test_the_exceptions_are_still_needed():
    """An exception nobody uses any more is a rule waived for nothing."""
    for rel, top in EXCEPTIONS:
        assert any(module.split(".")[0] == top for _, module in imports(ROOT / rel)), (rel, top)
