"""Piece `freeze_after_setup`: what a step loads at setup is left out of later full collections
(they rescanned a spaCy model's objects in every one), and nothing is frozen plainly."""
from __future__ import annotations

import gc

import pytest

from flows import runtime
from pipeline import steps
from tests.pipeline.test_steps import CountWords, _unit


@pytest.fixture(autouse=True)
def unfrozen():
    gc.unfreeze()
    steps.release_all()
    yield
    gc.unfreeze()
    steps.release_all()


def test_what_a_step_loads_at_setup_is_left_out_of_later_full_collections(tmp_path, monkeypatch):
    monkeypatch.delenv("EXPRESS_PLAIN", raising=False)
    steps.run_step(CountWords, _unit(tmp_path, "a", "one two"), None, runtime.around_setup)
    model = steps.prepared(CountWords, None).model
    assert gc.get_freeze_count() > 0
    tracked = {id(o) for o in gc.get_objects()}  # every generation a collection scans
    assert id(model) not in tracked and id(model["words"][0]) not in tracked
    gc.unfreeze()
    assert id(model) in {id(o) for o in gc.get_objects()}


def test_plainly_nothing_is_frozen(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPRESS_PLAIN", "1")
    steps.run_step(CountWords, _unit(tmp_path, "a", "one two"), None, runtime.around_setup)
    assert gc.get_freeze_count() == 0
