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


@pytest.mark.parametrize(("workers", "warmed"), [(0, True), (2, False)])
def test_only_a_build_in_this_process_imports_the_gate_while_its_api_starts(workers, warmed):
    # on a cluster, Great Expectations would sit in the flow process beside the workers at their peak
    code = ("import sys, threading\n"
            "from pathlib import Path\n"
            "from flows.cli.core import while_the_api_starts\n"
            "from pipeline.plan import BuildPlan\n"
            "from schemas.config import load_recipe\n"
            f"plan = BuildPlan(Path('unused'), load_recipe(None), None, (), 1000, {workers})\n"
            "import flows.process as p\n"
            "while_the_api_starts(plan)\n"
            "warmed = p.warm_gate_imports.cache_info().currsize == 1  # started (it may have ended already)\n"
            "if warmed: p.warm_gate_imports().join(300)\n"
            "print(warmed, 'great_expectations' in sys.modules)")
    assert fresh_python(code, timeout=300).split() == [str(warmed), str(warmed)]
