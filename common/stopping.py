"""A stop the user asks for (Ctrl-C, SIGTERM) is remembered as well as raised.

The exception lands wherever the main thread is. Where that is inside a library that catches it
(a build under load once ran on after a Ctrl-C and published; where it was caught is not known,
perhaps a call Prefect runs on the thread that waits for a task), the command would run on to the
end. So the signal's handler records the stop, and a long command calls `check` between its steps:
the stop is raised again there.

A stop's clean-up (threads ending their step, servers and workers stopping) takes seconds. Should it
hang (a thread stuck where the stop cannot reach it), the process leaves anyway GRACE_SECONDS after
the signal, with the stop's exit code; its temporary Prefect API then ends by itself once idle, as
after `kill -9` (flows/prefect_api.py), and a rerun resumes as after one.
"""
from __future__ import annotations

import os
import signal
import threading
import time

GRACE_SECONDS = 30.0


class Terminated(BaseException):
    """SIGTERM (what `timeout`, CI cancellation, `docker stop` and systemd send), raised like
    Ctrl-C's KeyboardInterrupt so the command stops its helpers and servers on its way out."""


_ASKED: list[type[BaseException]] = []
_COMMAND = ["express"]  # what the command's lines start with
_SAID: list[str] = []  # the line the command ended with, once printed


def named(command: str) -> None:
    _COMMAND[0] = f"express {command}"


def said(line: str) -> None:
    """The command printed the line it ends with (`interrupted`, `terminated`)."""
    _SAID.append(line)


def install() -> None:
    """Ctrl-C raises KeyboardInterrupt and SIGTERM raises Terminated, both recorded (main thread)."""
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)


def _on_signal(signum: int, frame: object) -> None:
    stop = KeyboardInterrupt if signum == signal.SIGINT else Terminated
    if not _ASKED:
        threading.Thread(target=_leave_if_stuck, args=(stop,), name="stop-guard", daemon=True).start()
    _ASKED.append(stop)
    raise stop()


def _leave_if_stuck(stop: type[BaseException]) -> None:
    time.sleep(GRACE_SECONDS)
    if not _ASKED:  # forgotten since (a test's own handlers)
        return
    code, word = (130, "interrupted") if stop is KeyboardInterrupt else (143, "terminated")
    if not _SAID:
        os.write(2, f"{_COMMAND[0]}: still stopping after {GRACE_SECONDS:.0f} s; left without waiting for "
                    f"its steps (a rerun resumes)\n{_COMMAND[0]}: {word}\n".encode())
    os._exit(code)


def check() -> None:
    """Raise the stop that was asked for, if one was (again, when something swallowed it)."""
    if _ASKED:
        raise _ASKED[0]()
