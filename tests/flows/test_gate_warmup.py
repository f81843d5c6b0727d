"""The gate's imports are warmed once per process, in the background: `express build` starts the
warm-up while its temporary Prefect API starts, and the build's own call later adds no thread."""
import pytest

from tests.fresh_python import fresh_python

pytestmark = pytest.mark.slow  # fresh interpreters importing Great Expectations (tests/conftest.py)


def test_warming_the_gate_twice_starts_one_thread_that_imports_great_expectations():
    code = ("import sys, threading, flows.process as b\n"
            "first, again = b.warm_gate_imports(), b.warm_gate_imports()\n"
            "names = [t.name for t in threading.enumerate() if t.name == 'warm-gx-import']\n"
            "first.join(300)\n"
            "print(len({id(first), id(again)}), len(names), 'great_expectations' in sys.modules, 'warehouse.gate' in sys.modules)")
    assert fresh_python(code, timeout=300).split() == ["1", "1", "True", "True"]
