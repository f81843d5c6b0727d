"""The hang guard of the tests' long subprocesses (tests/fresh_python.py::run_until_idle): a child
that works, however slowly a busy machine lets it, is never killed; one that waits on nothing is."""
from __future__ import annotations

import sys

import pytest

from tests.fresh_python import Hung, run_until_idle

BUSY = "import time\nend = time.monotonic() + 3\nwhile time.monotonic() < end:\n    sum(range(1000))\nprint('done')"


def test_a_child_that_keeps_working_past_the_idle_limit_is_left_to_finish():
    done = run_until_idle([sys.executable, "-c", BUSY], idle_seconds=1, poll=0.2)
    assert done.returncode == 0 and done.stdout.strip() == "done"


def test_a_child_that_waits_on_nothing_is_killed_with_its_stderr():
    with pytest.raises(Hung, match="used no CPU for 1 s and was killed; its stderr ends:\nwaiting"):
        run_until_idle([sys.executable, "-c", "import sys, time\nprint('waiting', file=sys.stderr, flush=True)\n"
                                              "time.sleep(600)"], idle_seconds=1, poll=0.2)
