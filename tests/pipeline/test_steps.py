"""The one step runner: a finished unit is read back from its marker, setup runs once per process,
a step's outputs appear only with its marker, a funnel that does not add up writes neither, a
step that replaces another tears it down, and what a setup loads is exempt from full collections."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pipeline import steps
from pipeline.results import ShardResult
from pipeline.steps import OrderedStep, Outputs, Step, read_marker, run_in_order, run_step
from schemas.config import Recipe
from schemas.funnel import Funnel


@dataclass(frozen=True)
class Unit:
    folder: Path
    name: str
    words: tuple[str, ...]


LOG: list[str] = []


class CountWords(Step[Unit, ShardResult]):
    """Keeps the words longer than two letters; writes them to kept.txt."""

    name = "count"
    result = ShardResult

    def setup(self, recipe: Recipe) -> None:
        super().setup(recipe)
        self.model = {"words": [[w] for w in ("a", "model", "held", "for", "the", "process")]}
        LOG.append("setup count")

    def teardown(self) -> None:
        LOG.append("teardown count")

    @classmethod
    def folder(cls, unit: Unit) -> Path:
        return unit.folder

    def run(self, unit: Unit, out: Outputs, lie: bool = False, **params: Any) -> ShardResult:
        LOG.append(f"run {unit.name}")
        kept = [w for w in unit.words if len(w) > 2]
        out(unit.folder / "kept.txt").write_text("\n".join(kept))
        funnel = Funnel(read=len(unit.words), kept=len(kept) + (1 if lie else 0))
        for w in unit.words:
            if len(w) <= 2:
                funnel.drop("short")
        return ShardResult(unit.name, funnel)


class Replacer(CountWords):
    name = "replacer"
    replaces = ("count",)


class Running(OrderedStep[Unit, ShardResult]):
    """Counts words seen so far over the units in order (state carried from one to the next)."""

    name = "running"
    result = ShardResult

    @classmethod
    def folder(cls, unit: Unit) -> Path:
        return unit.folder

    def begin(self, units: list[Unit]) -> None:
        self.seen = 0
        LOG.append("begin")

    def skip(self, unit: Unit) -> None:
        self.seen += len(unit.words)

    def end(self) -> None:
        LOG.append("end")

    def run(self, unit: Unit, out: Outputs, **params: Any) -> ShardResult:
        self.seen += len(unit.words)
        (out(unit.folder / "seen.txt")).write_text(str(self.seen))
        return ShardResult(unit.name, Funnel(read=len(unit.words), kept=len(unit.words)))


@pytest.fixture(autouse=True)
def fresh_process_state():
    steps.release_all()
    LOG.clear()
    yield
    steps.release_all()


def _unit(tmp_path: Path, name: str, words: str) -> Unit:
    (tmp_path / name).mkdir(exist_ok=True)
    return Unit(tmp_path / name, name, tuple(words.split()))


def test_a_step_sets_up_once_per_process_and_a_finished_unit_is_read_back_not_rerun(tmp_path):
    a, b = _unit(tmp_path, "a", "I am so very tired"), _unit(tmp_path, "b", "it is ok now")
    first = run_step(CountWords, a)
    run_step(CountWords, b)
    assert LOG == ["setup count", "run a", "run b"]
    again = run_step(CountWords, a)
    assert LOG == ["setup count", "run a", "run b"]  # neither set up nor run again
    assert again.skipped and not first.skipped and again.funnel == first.funnel
    assert read_marker(a.folder, "count")["funnel"] == {"read": 5, "kept": 2, "dropped": {"short": 3}, "malformed": 0}
    assert (a.folder / "kept.txt").read_text() == "very\ntired"  # "I", "am" and "so" dropped


def test_outputs_and_marker_appear_only_when_the_funnel_adds_up(tmp_path):
    a = _unit(tmp_path, "a", "I am so very tired")
    with pytest.raises(AssertionError, match="count a: funnel does not add up"):
        run_step(CountWords, a, lie=True)
    assert read_marker(a.folder, "count") is None and not (a.folder / "kept.txt").exists()
    assert run_step(CountWords, a).funnel.kept == 2  # the unit is simply redone


def test_setting_up_a_step_tears_down_the_steps_it_replaces(tmp_path):
    run_step(CountWords, _unit(tmp_path, "a", "one two"))
    run_step(Replacer, _unit(tmp_path, "b", "three four"))
    assert LOG == ["setup count", "run a", "teardown count", "setup count", "run b"]


def test_what_the_caller_runs_around_a_setup_wraps_it_and_the_teardowns_it_causes(tmp_path):
    """The runner holds no process policy of its own: its caller's `around_setup` (the runtime's)
    wraps each setup, with the teardowns of the steps it replaces, and nothing else."""
    @contextmanager
    def around(step):
        LOG.append(f"enter {step.name}")
        yield
        LOG.append(f"leave {step.name}")

    run_step(CountWords, _unit(tmp_path, "a", "one two"), None, around)
    run_step(CountWords, _unit(tmp_path, "b", "three"), None, around)  # set up already: nothing around
    run_step(Replacer, _unit(tmp_path, "c", "four five"), None, around)
    assert LOG == ["enter count", "setup count", "leave count", "run a", "run b",
                   "enter replacer", "teardown count", "setup count", "leave replacer", "run c"]


def test_an_ordered_step_replays_finished_units_into_its_state(tmp_path):
    units = [_unit(tmp_path, n, w) for n, w in (("a", "x y"), ("b", "x y z"), ("c", "w"))]
    run_in_order(Running, units, None)
    assert [(u.folder / "seen.txt").read_text() for u in units] == ["2", "5", "6"]
    (units[1].folder / "running.done").unlink()
    (units[2].folder / "running.done").unlink()
    (units[2].folder / "seen.txt").write_text("stale")
    again = run_in_order(Running, units, None)
    assert [r.skipped for r in again] == [True, False, False]
    assert [(u.folder / "seen.txt").read_text() for u in units] == ["2", "5", "6"]
    LOG.clear()
    assert all(r.skipped for r in run_in_order(Running, units, None)) and LOG == []  # nothing set up or begun
