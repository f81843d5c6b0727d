"""Measured figures live in bench/README.md (and its history.md), not in the code: a comment or a
docstring says why, never how fast or how big it measured. This fails on a new one: a duration in
microseconds, an approximate measure (~N s, ~N MB), a ratio of speed or cost (3x faster, 30 %
cheaper), a cost stated in time, or a before -> after pair."""
from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from tests.test_layering import MAY_IMPORT, ROOT

FOLDERS = [*MAY_IMPORT, "flows"]
NUMBER = r"\d[\d,.]*"
FIGURES = re.compile("|".join([
    rf"~\s?{NUMBER}\s?(?:us|µs|ms|s|seconds?|minutes?|MB|GB|KB|MiB|GiB|B|%|x)(?!\w)",  # an approximate measure
    rf"(?<![\w.]){NUMBER}\s?x\s+(?:cheaper|faster|slower|more|less|the\b)",  # a ratio of speed or cost
    rf"(?<![\w.]){NUMBER}\s?%\s+(?:cheaper|faster|slower|fewer|more|less|of the (?:time|cost|CPU))",
    rf"(?<![\w.]){NUMBER}\s?(?:us|µs)\b",  # microseconds are always a measurement
    rf"\b(?:costs?|took|takes|saves?|cost us)\s+~?{NUMBER}\s?(?:us|µs|ms|s|seconds?|MB|GB|%)(?!\w)",
    rf"{NUMBER}\s?(?:us|µs|ms|s|MB|GB|%)?\s?->\s?{NUMBER}",  # before -> after
]))


def texts(path: Path):
    """(line, text) of each comment and docstring of a module."""
    source = path.read_text(encoding="utf-8")
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield (node.body[0].lineno if node.body else 1), doc


def figures(path: Path) -> list[str]:
    rel = path.relative_to(ROOT).as_posix()
    return [f"{rel}:{line}: {m.group()!r}" for line, text in texts(path) for m in FIGURES.finditer(text)]


def test_no_measured_figure_in_a_comment_or_docstring():
    found = [f for folder in FOLDERS for path in sorted((ROOT / folder).rglob("*.py")) for f in figures(path)]
    assert not found, "move these to bench/README.md (or history.md) and say why in words:\n" + "\n".join(found)


def test_the_check_finds_each_kind_of_figure(tmp_path, monkeypatch):
    probe = tmp_path / "probe.py"
    probe.write_text('"""Loads in ~20 ms."""\n# 3x faster than the stdlib\n# 30 % cheaper\n# costs 12 us a post\n'
                     "# publish 23.3 -> 19.5 s\n# a 64 MB memory limit, 1 MiB blocks, Prefect's 20 s\n")
    monkeypatch.setattr("tests.test_figures_live_in_bench.ROOT", tmp_path)
    assert len(figures(probe)) == 5, figures(probe)
