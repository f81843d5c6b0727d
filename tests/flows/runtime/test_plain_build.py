"""EXPRESS_PLAIN=1 turns every runtime piece off and changes not a byte of what a build publishes:
`express build` of the demo corpus with the switch on gives the golden release (data files, run
tables, quarantine, manifest), as the tuned build of tests/pipeline/test_release_bytes.py does."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.fresh_python import REPO, environ_without
from tests.pipeline.golden import describe, expected

pytestmark = pytest.mark.slow  # a whole build in a fresh process, every piece off (tests/conftest.py)


def test_a_plain_build_publishes_the_tuned_builds_release_byte_for_byte(demo_dump, demo_build, tmp_path, prefect_home):
    env = environ_without("PREFECT_API", "EXPRESS_TEMPORARY", PREFECT_HOME=str(prefect_home),
                          EXPRESS_PLAIN="1")
    done = subprocess.run([sys.executable, "-m", "flows.cli", "build", "--input", str(demo_dump), "--warehouse",
                           str(tmp_path / "wh"), "--config", str(REPO / "configs" / "demo.toml")],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    manifest = Path(done.stdout.strip().splitlines()[-1])
    run = next((tmp_path / "wh" / "runs").iterdir())
    plain = describe(manifest, run, tmp_path / "wh" / "quarantine" / run.name)
    assert plain["files"] == expected()["files"] and plain["manifest"] == expected()["manifest"]
    tuned = Path(demo_build["release"]["manifest"]).parent
    for name in ("train", "validation", "test"):
        part = f"data/{name}-00000-of-00001.parquet"
        assert (manifest.parent / part).read_bytes() == (tuned / part).read_bytes(), part
