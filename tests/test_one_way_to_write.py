"""One way to write a file (docs/extending.md): only common/files.py renames a file or folder into
place. Calls are read from the source: `os.replace`, `os.rename` (or either imported by name), any
`.rename(...)`, and `.replace(x)` with a single argument, which is Path.replace (str.replace takes
two, dataclasses.replace and datetime.replace take keywords)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OWNER = ROOT / "common" / "files.py"
NOT_OURS = {".venv", ".git", "tests"}  # tests hold a rename to stop a process at it (tests/takedowns/kill.py)


def renames(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [(node.lineno, f"from os import {a.name}") for a in node.names if a.name in ("replace", "rename")]
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        name, on = node.func.attr, node.func.value
        on_os = isinstance(on, ast.Name) and on.id == "os"
        if name in ("rename", "renames") or (name == "replace" and (on_os or (len(node.args) == 1 and not node.keywords))):
            found.append((node.lineno, ast.unparse(node)[:80]))
    return [f"{line}: {text}" for line, text in sorted(found)]


def our_modules() -> list[Path]:
    folders = [d for d in ROOT.iterdir() if d.is_dir() and d.name not in NOT_OURS]
    return sorted([*ROOT.glob("*.py"), *(p for d in folders for p in d.rglob("*.py"))])


def test_no_module_but_common_files_renames_a_file_into_place():
    found = [f"{p.relative_to(ROOT)}:{hit}" for p in our_modules() if p != OWNER for hit in renames(p)]
    assert not found, "write through common/files.py (writing, write_atomic, place, place_folder):\n" + "\n".join(found)


def test_the_check_sees_each_way_of_renaming(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import os\nfrom os import rename\nos.replace(a, b)\nos.rename(a, b)\ntmp.replace(path)\n"
                      "Path(a).rename(b)\ntext.replace('a', 'b')\nrow.replace(tzinfo=None)\n")
    assert [hit.split(":")[0] for hit in renames(sample)] == ["2", "3", "4", "5", "6"]
    assert OWNER in our_modules() and ROOT / "pipeline" / "steps.py" in our_modules()
