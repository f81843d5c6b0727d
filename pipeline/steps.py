"""One shape for every step of a build, and the one runner that runs it.

A step (split, filter, dedupe, extract, prescan, assemble) is a small class: `setup(recipe)` once
per worker process, `run(unit, out) -> result` for one unit of work (an input, a shard, a run),
`teardown()` when the process moves on. The runner owns everything else, the same way for every
step: the completion marker (the only resume), the clock, the funnel check, and the commit of the
outputs, which are written under temporary names and renamed into place before the marker, so a
marker means "finished and complete" and a killed step is simply redone. What a process does
around a setup (how models load) is its caller's (`around_setup`).
"""
from __future__ import annotations

import json
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from common.files import place, temp_path, write_json
from pipeline.results import StepResult
from pipeline.run import load_saved_recipe
from schemas.config import Recipe, load_recipe

U = TypeVar("U")  # a unit of work: an input file, a shard, a run
R = TypeVar("R", bound=StepResult)
# what a step's setup (and the teardowns it causes) runs inside, given the step class
AroundSetup = Callable[[type["Step[Any, Any]"]], AbstractContextManager[Any]]


def marker(folder: Path, name: str) -> Path:
    return folder / f"{name}.done"


def read_marker(folder: Path, name: str) -> dict[str, Any] | None:
    """The counts a finished step recorded, or None when the step has not finished."""
    m = marker(folder, name)
    return json.loads(m.read_text()) if m.exists() else None


def write_marker(folder: Path, name: str, data: dict[str, Any]) -> None:
    """Write the marker whole (common/files.py): it exists only when complete."""
    write_json(marker(folder, name), data, indent=1, sort_keys=True)


def tmp_name(path: Path) -> Path:
    """Where a step writes `path` before the runner renames it into place: a fixed temp name, which
    a rerun of a killed step writes over."""
    return temp_path(path, "step")


def seconds_since(started: float) -> float:
    """Seconds since `started` (time.perf_counter()), as a step's result records them."""
    return round(time.perf_counter() - started, 3)


@dataclass
class Outputs:
    """The files one step writes for one unit. `out(path)` names a final file and returns the
    temporary path to write; the runner renames them all into place once the step has returned."""

    files: list[Path] = field(default_factory=list)

    def __call__(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.files.append(path)
        return tmp_name(path)

    @staticmethod
    def temporary(path: Path) -> Path:
        """Where an output named before is, until the commit (to read it back in the same step)."""
        return tmp_name(path)

    def commit(self) -> None:
        for p in self.files:
            place(tmp_name(p), p)


class Step(ABC, Generic[U, R]):
    """A step of the build. Subclasses set `name` (its marker, `<name>.done`) and `result` (the
    typed result its marker is read back as), and say where a unit's marker lives."""

    name: ClassVar[str]
    result: ClassVar[type[StepResult]]
    # steps whose worker state this one's setup hands back (the filters' language model before
    # dedupe or extraction): a worker holds one big model at a time
    replaces: ClassVar[tuple[str, ...]] = ()

    def setup(self, recipe: Recipe) -> None:
        """Load what every unit needs (models, filter chains), once per worker process."""
        self.recipe = recipe

    def teardown(self) -> None:
        """Hand back what `setup` loaded."""

    @classmethod
    @abstractmethod
    def folder(cls, unit: U) -> Path:
        """Where the unit's marker lives (known without setting the step up)."""

    @classmethod
    def marker_name(cls, unit: U) -> str:
        return cls.name

    @classmethod
    def stale(cls, unit: U, done: R, **params: Any) -> bool:
        """A finished unit that must be redone all the same (see FilterStep)."""
        return False

    @abstractmethod
    def run(self, unit: U, out: Outputs, **params: Any) -> R:
        """Do the work of one unit, writing each output file to `out(final_path)`."""


def plain_setup(step: type[Step[Any, Any]]) -> AbstractContextManager[Any]:
    """A setup with nothing around it."""
    return nullcontext()


_READY: dict[tuple[str, str], Step[Any, Any]] = {}  # this process's set-up steps, by (name, recipe)
_READY_LOCK = threading.Lock()  # the flow process runs steps on more than one thread


def prepared(step: type[Step[U, R]], recipe_path: str | None,
             around_setup: AroundSetup = plain_setup) -> Step[U, R]:
    """The set-up instance of `step` in this process (set up on first use, then reused); setting
    one up tears down the steps it `replaces`. No recipe: the built-in defaults."""
    key = (step.name, str(recipe_path))
    with _READY_LOCK:
        if key not in _READY:
            with around_setup(step):
                for other in [k for k in _READY if k[0] in step.replaces or (k[0] == step.name and k != key)]:
                    _READY.pop(other).teardown()
                instance = step()
                instance.setup(load_saved_recipe(recipe_path) if recipe_path else load_recipe(None))
            _READY[key] = instance
        return _READY[key]


def release_all() -> None:
    """Tear down every set-up step of this process."""
    with _READY_LOCK:
        while _READY:
            _READY.popitem()[1].teardown()


def finished(step: type[Step[U, R]], unit: U, **params: Any) -> R | None:
    """The result a finished unit recorded, or None when it must (still) run."""
    done = read_marker(step.folder(unit), step.marker_name(unit))
    if done is None:
        return None
    result = step.result.from_marker(done)
    return None if step.stale(unit, result, **params) else result  # type: ignore[return-value]


def run_step(step: type[Step[U, R]], unit: U, recipe_path: str | None = None,
             around_setup: AroundSetup = plain_setup, **params: Any) -> R:
    """Run one step on one unit, or read its result back when its marker says it is done."""
    done = finished(step, unit, **params)
    if done is not None:
        return done
    return _execute(prepared(step, recipe_path, around_setup), unit, params)


def _execute(step: Step[U, R], unit: U, params: dict[str, Any]) -> R:
    started = time.perf_counter()
    out = Outputs()
    result = step.run(unit, out, **params)
    for label, funnel in result.funnels().items():
        funnel.check(f"{step.name} {label}")
    out.commit()
    result.seconds = seconds_since(started)
    write_marker(step.folder(unit), step.marker_name(unit), result.to_marker())
    return result


class OrderedStep(Step[U, R]):
    """A step that must see every unit of a run in order, with state carried from one to the next
    (dedupe: a post repeats an earlier one). `begin` gets all units before the first `run`;
    `skip(unit)` is called for a unit finished before, in its place in the order."""

    def begin(self, units: list[U]) -> None:
        """Prepare the state over all units."""

    def skip(self, unit: U) -> None:
        """Move past a finished unit."""

    def end(self) -> None:
        """Release the state `begin` built."""


def run_in_order(step: type[OrderedStep[U, R]], units: Iterable[U], recipe_path: str,
                 around_setup: AroundSetup = plain_setup) -> list[R]:
    """Run an ordered step over `units`; finished units are read back from their markers (and
    still count for the state), and nothing is set up when every unit is finished."""
    units = list(units)
    results: list[R | None] = [finished(step, u) for u in units]
    if all(r is not None for r in results):
        return results  # type: ignore[return-value]
    instance = prepared(step, recipe_path, around_setup)
    instance.begin(units)
    try:
        for k, unit in enumerate(units):
            if results[k] is not None:
                instance.skip(unit)
            else:
                results[k] = _execute(instance, unit, {})
    finally:
        instance.end()
    return results  # type: ignore[return-value]
