"""Hiding optional dependencies during one import: refused on the importing thread only, importable
everywhere else and afterwards; deferring one: bound at once, run on first use; Great Expectations
imported so (piece `gx_imports`) still validates, and imports them all when the piece is off."""
from __future__ import annotations

import builtins
import importlib
import os
import sys
import threading

import pytest

from flows.runtime.imports import deferred, hidden
from tests.fresh_python import environ_without, fresh_python


@pytest.fixture
def fresh_colorsys():
    """A small stdlib module this process has not imported (removed from the cache if it had)."""
    sys.modules.pop("colorsys", None)
    yield "colorsys"
    sys.modules.pop("colorsys", None)


def test_a_hidden_module_is_refused_on_this_thread_and_importable_after(fresh_colorsys):
    with hidden("json", fresh_colorsys):  # json is imported already: left alone
        importlib.import_module("json")
        with pytest.raises(ImportError):
            importlib.import_module(fresh_colorsys)
        assert fresh_colorsys not in sys.modules
    assert importlib.import_module(fresh_colorsys).rgb_to_hsv(1, 0, 0) == (0.0, 1.0, 1)


def test_another_thread_imports_a_module_hidden_on_this_one(fresh_colorsys):
    """The build hides optional imports on a background thread while Prefect runs on its main one."""
    got = []
    with hidden(fresh_colorsys):
        other = threading.Thread(target=lambda: got.append(importlib.import_module(fresh_colorsys).__name__))
        other.start()
        other.join()
        assert got == [fresh_colorsys]
        # once another thread has imported it, it is an already imported module: left alone
        assert importlib.import_module(fresh_colorsys).__name__ == fresh_colorsys


def test_a_deferred_module_runs_its_code_on_first_use_only(tmp_path, monkeypatch):
    (tmp_path / "express_deferred_probe.py").write_text(
        "import builtins\nbuiltins.express_probe_runs = getattr(builtins, 'express_probe_runs', 0) + 1\nVALUE = 7\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "express_deferred_probe", raising=False)
    import builtins

    monkeypatch.setattr(builtins, "express_probe_runs", 0, raising=False)
    with deferred("express_deferred_probe"):
        probe = importlib.import_module("express_deferred_probe")
    assert builtins.express_probe_runs == 0, "the module ran while deferred"
    assert probe.VALUE == 7 and builtins.express_probe_runs == 1
    assert importlib.import_module("express_deferred_probe").VALUE == 7 and builtins.express_probe_runs == 1
    monkeypatch.delitem(sys.modules, "express_deferred_probe")


def test_a_module_deferred_on_this_thread_is_imported_whole_on_another(tmp_path, monkeypatch):
    (tmp_path / "express_deferred_other.py").write_text("VALUE = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "express_deferred_other", raising=False)
    got = []
    with deferred("express_deferred_other"):
        other = threading.Thread(target=lambda: got.append(type(importlib.import_module("express_deferred_other"))))
        other.start()
        other.join()
    assert got == [type(sys)], got  # a plain module, run at once
    monkeypatch.delitem(sys.modules, "express_deferred_other")


GX_CODE = """
import sys, types
import pandas as pd
from flows.runtime.models import import_gx
import_gx()
from warehouse.gate.gx import validate_tables
suite = {"name": "t", "version": "1", "table": "rows", "expectations": [
    {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "a"}},
    {"type": "expect_column_values_to_be_between", "kwargs": {"column": "a", "min_value": 0, "max_value": 2}}]}
out = validate_tables(lambda name: [pd.DataFrame({"a": [1, 2, 3]})], {"rows"}, [suite], {})
assert not out["success"], out
assert [f["expectation"] for f in out["failures"]] == ["expect_column_values_to_be_between"], out["failures"]
# a deferred module is a stand-in until first used; a run one is a plain module
print("sqlalchemy" in sys.modules, [type(sys.modules[m]) is types.ModuleType for m in ("scipy.stats", "altair")])
import sqlalchemy
import scipy.stats
print("ok", sqlalchemy.__name__, scipy.stats.norm.cdf(0.0))
"""


def test_great_expectations_validates_without_running_sqlalchemy_scipy_stats_or_altair_which_stay_usable():
    out = fresh_python(GX_CODE, env=environ_without("EXPRESS_PLAIN"), timeout=300).splitlines()
    assert out[-2:] == ["False [False, False]", "ok sqlalchemy 0.5"]


def test_with_the_piece_off_great_expectations_imports_what_it_imports():
    """The test above would notice the piece gone: plainly, GX runs all three."""
    out = fresh_python(GX_CODE, env={**os.environ, "EXPRESS_PLAIN": "gx_imports"}, timeout=300).splitlines()
    assert out[-2:] == ["True [True, True]", "ok sqlalchemy 0.5"]
