"""The environment every express command starts from, set before Prefect, pyarrow or a model is
imported (and inherited by the processes a command starts). A variable the user set wins."""
from __future__ import annotations

import logging
import os

# Nothing reaches out at run time unless the user asks for a live client (praw, a chat server).
# DO_NOT_TRACK: Prefect's client sends its own usage events in a terminal whenever the API it talks
# to has analytics on, as a user's `prefect server start` has by default.
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "GX_ANALYTICS_ENABLED": "false",
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1"}
DEFAULTS = {
    # a temporary API with a new database takes longer to start than Prefect's 20 s allow
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
    "PREFECT_LOGGING_LEVEL": "WARNING",
}
# Prefect's flow and task run loggers report a failure with its traceback at ERROR level; the
# command prints the reason in one line instead (unless --debug).
QUIET_RUN_LOGS = {"PREFECT_LOGGING_LOGGERS_PREFECT_FLOW_RUNS_LEVEL": "CRITICAL",
                  "PREFECT_LOGGING_LOGGERS_PREFECT_TASK_RUNS_LEVEL": "CRITICAL"}
# Prefect's senders of events and logs warn "Still processing items" while a command's last events
# go out as it exits: a library's note about its own queue, not about the command's work.
QUIET_LOGGERS = ("EventsWorker", "APILogWorker")


def set_defaults(quiet_runs: bool = False) -> None:
    """The defaults above; `quiet_runs` leaves failures to the command's one-line message and keeps
    the libraries' notes about themselves out of its output."""
    for key, value in {**OFFLINE, **DEFAULTS}.items():
        os.environ.setdefault(key, value)
    if quiet_runs:
        os.environ.update(QUIET_RUN_LOGS)
        for name in QUIET_LOGGERS:
            logging.getLogger(name).setLevel(logging.ERROR)
