"""The folder rules of docs/extending.md: what each folder may import of ours, with no exceptions,
and no Prefect outside flows/. Imports are read from the source (module level and inside functions
alike)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OURS = ("common", "schemas", "privacy", "sources", "filters", "extractors", "warehouse", "review", "pipeline",
        "evaluation", "takedowns", "flows")
LOW = {"common", "schemas"}
MAY_IMPORT = {"common": set(), "schemas": {"common"}, "privacy": LOW, "sources": LOW,
              "filters": LOW | {"privacy"}, "extractors": LOW, "warehouse": LOW | {"privacy"},
              "review": LOW | {"warehouse", "extractors"},
              "pipeline": LOW | {"privacy", "sources", "filters", "extractors", "warehouse", "review"},
              "evaluation": LOW | {"warehouse"},
              "takedowns": LOW | {"privacy", "sources", "filters", "extractors", "warehouse", "review", "pipeline",
                                  "evaluation"}}


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


def _module_graph() -> dict[str, set[str]]:
    """Our modules and the modules of ours each imports (at module level, inside functions and
    under TYPE_CHECKING alike)."""
    modules = {}
    for folder in OURS:
        for path in (ROOT / folder).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            modules[name] = path

    def ours(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [f"{node.module}.{a.name}" for a in node.names]
            graph[name] |= {t for t in map(ours, targets) if t and t != name}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def test_no_import_circle_in_the_library():
    assert not _circles(_module_graph())


def test_the_circle_finder_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_folder_holds_more_than_fifteen_modules_at_one_level():
    """A room that grows past ~15 modules gets rooms of its own (architecture.md)."""
    crowded = {}
    for folder in OURS:
        for d in [ROOT / folder, *sorted(p for p in (ROOT / folder).rglob("*") if p.is_dir())]:
            modules = [p for p in d.glob("*.py") if p.name != "__init__.py"]
            if len(modules) > 15:
                crowded[str(d.relative_to(ROOT))] = len(modules)
    assert not crowded, crowded
