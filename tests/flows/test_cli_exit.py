"""The console script's quick exit (flows.process.skip_exit_collection) keeps what a normal exit does:
the exit code, every line of output, and the exit handlers (e.g. the temporary Prefect API's stop);
and the script collects cycles as flows.process.collect_less says."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import atexit, gc, pathlib, sys
marker = pathlib.Path(sys.argv[1])
atexit.register(lambda: marker.write_text(f"frozen={gc.get_freeze_count() > 0} gc={gc.get_threshold()}"))
sys.argv = ["express", *sys.argv[2:]]
from flows.cli import entry
sys.exit(entry())
"""


def _run(tmp_path, *args):
    marker = tmp_path / "atexit-ran"
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(marker), *args], cwd=REPO, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    return proc, marker


def test_a_command_exits_with_its_output_and_exit_handlers_after_freezing_and_collects_less(tmp_path):
    from flows.process import GC_THRESHOLDS

    proc, marker = _run(tmp_path, "vocab")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("vocabulary vocab-") and "canonical labels:" in proc.stdout
    assert marker.read_text() == f"frozen=True gc={GC_THRESHOLDS}"  # the handler ran, after the freeze


@pytest.mark.parametrize("args", [("vocab", "check", "--file", "{tmp}/missing.tsv"),  # the command fails
                                  ("vocab", "check", "{tmp}/missing.tsv")])  # argparse exits (SystemExit)
def test_a_failing_command_keeps_its_exit_code_and_message(tmp_path, args):
    proc, marker = _run(tmp_path, *(a.format(tmp=tmp_path) for a in args))
    assert proc.returncode != 0
    assert "missing.tsv" in proc.stderr and "Traceback" not in proc.stderr
    assert marker.read_text().startswith("frozen=True ")
