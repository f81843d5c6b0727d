"""docs/extending.md's worked examples, applied as written: the new filter (with a numeric option)
and the new takedown kind are diffs, applied to a copy of the repository; the new predictor is a
module outside it and a test. Each touches exactly the files its section names, and with all of
them in place the suite's checks of what they touch pass: their own tests, the recipe's keys and
numbers, the filter chain, the golden's recorded recipe, the takedown commands, the folder rules."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.fresh_python import run_until_idle

REPO = Path(__file__).resolve().parent.parent
GUIDE = REPO / "docs" / "extending.md"
DIFFS = ("A new filter", "A new takedown kind")
CHECKS = ["tests/schemas/test_recipe_numbers.py", "tests/filters/test_filter_chain.py",
          "tests/pipeline/test_release_bytes.py::test_the_golden_release_records_the_demo_recipe_as_it_loads_today",
          "tests/takedowns/test_cli.py", "tests/test_layering.py"]


def section(title: str) -> str:
    text = GUIDE.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else len(text)]


def code_blocks(text: str) -> list[str]:
    """The Markdown text's indented code blocks, as written (four spaces off each line)."""
    blocks, lines = [], []
    for line in [*text.splitlines(), "."]:
        if line.startswith("    ") or (lines and not line.strip()):
            lines.append(line[4:])
        elif lines:
            blocks.append("\n".join(lines).rstrip("\n") + "\n")
            lines = []
    return blocks


def named(text: str) -> set[str]:
    """The files a section says its example touches: the paths of its "touches exactly ... and
    nothing else"."""
    said = re.search(r"touches\s+exactly(.*?)\s+and\s+nothing\s+else", text, re.S)
    assert said, "the section names the files its example touches"
    return set(re.findall(r"`([\w./-]+\.\w+)`", said.group(1)))


def copy_of_the_repository(to: Path) -> Path:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (REPO / name).is_file():
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, to / name)
    return to


def test_the_guides_worked_examples_touch_only_the_files_they_name_and_pass_the_suite(tmp_path):
    copy = copy_of_the_repository(tmp_path / "repo")
    added: list[str] = []
    for title in DIFFS:
        text = section(title)
        diff = "".join(b for b in code_blocks(text) if b.startswith("--- "))
        touched = {line[len("+++ b/"):] for line in diff.splitlines() if line.startswith("+++ b/")}
        assert touched == named(text), title
        applied = subprocess.run(["git", "apply", "-"], input=diff, cwd=copy, capture_output=True, text=True)
        assert applied.returncode == 0, f"{title}: the diff no longer applies: {applied.stderr}"
        added += [f for f in touched if f.startswith("tests/") and f.endswith(".py") and not (REPO / f).exists()]
    text = section("A new predictor")
    module = next(b for b in code_blocks(text) if "class SubredditPrior" in b)
    test = next(b for b in code_blocks(text) if "def test_subreddit_prior" in b)
    assert named(text) == {"my_predictors/subreddit_prior.py", "tests/evaluation/test_subreddit_prior.py"}
    (tmp_path / "plugins" / "my_predictors").mkdir(parents=True)
    (tmp_path / "plugins" / "my_predictors" / "subreddit_prior.py").write_text(module)
    (copy / "tests" / "evaluation" / "test_subreddit_prior.py").write_text(test)
    added.append("tests/evaluation/test_subreddit_prior.py")
    assert len(added) == 3, added  # each example's own test
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "plugins"), "PYTHONDONTWRITEBYTECODE": "1"}
    done = run_until_idle([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "not build_refuses",
                           *sorted(added), *CHECKS], cwd=copy, env=env)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert re.search(r"\b\d+ passed", done.stdout) and "skipped" not in done.stdout, done.stdout[-2000:]
