"""Only a build whose steps run in this process and that publishes through the gate starts the
gate's helper process (warehouse/gate_process.py) before its flow; the build's own process never
imports Great Expectations then."""
import pytest

from tests.fresh_python import fresh_python

pytestmark = pytest.mark.slow  # fresh interpreters starting a helper that imports Great Expectations (tests/conftest.py)


@pytest.mark.parametrize(("workers", "publish", "gate", "helper"),
                         [(0, True, True, True), (2, True, True, False), (0, False, True, False), (0, True, False, False)])
def test_only_a_publishing_build_in_this_process_starts_the_gate_helper(workers, publish, gate, helper):
    # on a cluster, the helper would sit beside the workers at their peak and take their CPU
    code = ("import sys\n"
            "from dataclasses import replace\n"
            "from pathlib import Path\n"
            "from flows import process\n"
            "from pipeline.plan import BuildPlan\n"
            "from schemas.config import load_recipe\n"
            "from warehouse import gate_process\n"
            "recipe = load_recipe(None)\n"
            f"recipe = replace(recipe, gate=replace(recipe.gate, enabled={gate}))\n"
            f"plan = BuildPlan(Path('unused'), recipe, None, (), 1000, {workers}, publish={publish})\n"
            "started = process.start_gate_helper(plan.recipe, plan.in_process, plan.publish)\n"
            "pid = gate_process.helper_pid()\n"
            "gate_process.stop()\n"
            "print(started, pid is not None, 'great_expectations' in sys.modules)")
    assert fresh_python(code, timeout=300).split() == [str(helper), str(helper), "False"]
