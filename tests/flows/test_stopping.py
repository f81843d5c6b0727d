"""A stop the user asked for outlives whatever catches it: the signal handler records Ctrl-C and
SIGTERM, and `common.stopping.check`, which a build calls between its steps, raises them again
(a build once ran on to the end after a Ctrl-C caught where it landed; the whole command's
behaviour: tests/flows/test_signals.py)."""
import os
import signal

import pytest

from common import stopping


@pytest.fixture
def handlers():
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    stopping.install()
    yield
    signal.signal(signal.SIGINT, before[0])
    signal.signal(signal.SIGTERM, before[1])
    stopping._ASKED.clear()


def test_nothing_asked_means_check_passes(handlers):
    stopping.check()


@pytest.mark.parametrize(("signum", "raised"), [(signal.SIGINT, KeyboardInterrupt),
                                                (signal.SIGTERM, stopping.Terminated)])
def test_a_stop_swallowed_where_it_landed_is_raised_again_at_the_next_check(handlers, signum, raised):
    try:
        os.kill(os.getpid(), signum)  # the handler runs here, on this (the main) thread
    except BaseException:  # noqa: BLE001 - what a library's callback does with it
        pass
    with pytest.raises(raised):
        stopping.check()
    with pytest.raises(raised):
        stopping.check()  # and at every later one, on the way out
