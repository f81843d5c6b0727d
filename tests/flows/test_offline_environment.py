"""An express command reaches nothing its user did not ask for (flows/environment.py): it turns off
Prefect's client telemetry (DO_NOT_TRACK), which otherwise sends usage events from a terminal
whenever the API it reports to has analytics on, as a user's `prefect server start` has by default.
A value the user set wins."""
from __future__ import annotations

import json

import pytest

from tests.fresh_python import environ_without, fresh_python

# the variables by which Prefect's client (and most tools) tell a CI machine, where it sends nothing
CI_MARKS = ("CI", "GITHUB_", "GITLAB_", "JENKINS_", "TRAVIS", "CIRCLECI", "BUILDKITE", "TF_BUILD", "CODEBUILD_",
            "BITBUCKET_", "TEAMCITY_", "DRONE", "SEMAPHORE", "APPVEYOR", "BUDDY")

_COMMAND = """
import json, os, sys
from prefect.analytics import is_telemetry_enabled
before = is_telemetry_enabled()
from flows.cli import main
main(["releases", "--warehouse", sys.argv[1]])
print(json.dumps({"before": before, "after": is_telemetry_enabled(), "DO_NOT_TRACK": os.environ.get("DO_NOT_TRACK")}))
"""


@pytest.mark.parametrize(("users", "after"), [({}, False), ({"DO_NOT_TRACK": "0"}, True)],
                         ids=["unset", "the-users-own"])
def test_a_command_turns_prefects_client_telemetry_off_unless_its_user_chose(tmp_path, users, after):
    env = environ_without("DO_NOT_TRACK", *CI_MARKS, **users)
    out = fresh_python(_COMMAND, str(tmp_path / "wh"), env=env)
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen["before"] is True  # on a terminal of no CI, Prefect's client would send
    assert seen["after"] is after and seen["DO_NOT_TRACK"] == users.get("DO_NOT_TRACK", "1")
