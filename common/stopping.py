"""A stop the user asks for (Ctrl-C, SIGTERM) is remembered as well as raised.

The exception lands wherever the main thread is. Where that is inside a library that catches it
(a build under load once ran on after a Ctrl-C and published; where it was caught is not known,
perhaps a call Prefect runs on the thread that waits for a task), the command would run on to the
end. So the signal's handler records the stop, and a long command calls `check` between its steps:
the stop is raised again there.
"""
from __future__ import annotations

import signal


class Terminated(BaseException):
    """SIGTERM (what `timeout`, CI cancellation, `docker stop` and systemd send), raised like
    Ctrl-C's KeyboardInterrupt so the command stops its helpers and servers on its way out."""


_ASKED: list[type[BaseException]] = []


def install() -> None:
    """Ctrl-C raises KeyboardInterrupt and SIGTERM raises Terminated, both recorded (main thread)."""
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)


def _on_signal(signum: int, frame: object) -> None:
    stop = KeyboardInterrupt if signum == signal.SIGINT else Terminated
    _ASKED.append(stop)
    raise stop()


def check() -> None:
    """Raise the stop that was asked for, if one was (again, when something swallowed it)."""
    if _ASKED:
        raise _ASKED[0]()
