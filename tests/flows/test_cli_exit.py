"""The console script keeps what a normal exit does: the exit code, every line of output, and the
exit handlers (e.g. the temporary Prefect API's stop); it collects cycles as piece `gc_thresholds`
says, and not at all once the command is done (the objects it holds are frozen before its process
ends, with or without the runtime); and a switch naming no piece is refused."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import atexit, gc, pathlib, sys
marker = pathlib.Path(sys.argv[1])
atexit.register(lambda: marker.write_text(f"gc={gc.get_threshold()} frozen={gc.get_freeze_count() > 0}"))
sys.argv = ["express", *sys.argv[2:]]
from flows.cli import entry
sys.exit(entry())
"""


def _run(tmp_path, *args, plain=""):
    marker = tmp_path / "atexit-ran"
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(marker), *args], cwd=REPO, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO), "EXPRESS_PLAIN": plain})
    return proc, marker


def test_a_command_exits_with_its_output_and_exit_handlers_and_collects_less(tmp_path):
    from flows.runtime.collector import GC_THRESHOLDS

    proc, marker = _run(tmp_path, "vocab")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("vocabulary vocab-") and "canonical labels:" in proc.stdout
    assert marker.read_text() == f"gc={GC_THRESHOLDS} frozen=True"  # the handler ran, after the freeze


@pytest.mark.parametrize("args", [("vocab", "check", "--file", "{tmp}/missing.tsv"),  # the command fails
                                  ("vocab", "check", "{tmp}/missing.tsv")])  # argparse exits (SystemExit)
def test_a_failing_command_keeps_its_exit_code_and_message(tmp_path, args):
    proc, marker = _run(tmp_path, *(a.format(tmp=tmp_path) for a in args))
    assert proc.returncode != 0
    assert "missing.tsv" in proc.stderr and "Traceback" not in proc.stderr
    assert marker.read_text().startswith("gc=") and marker.read_text().endswith("frozen=True")


def test_plainly_a_command_keeps_pythons_collector(tmp_path):
    proc, marker = _run(tmp_path, "vocab", plain="1")
    assert proc.returncode == 0, proc.stderr
    assert marker.read_text() == "gc=(700, 10, 10) frozen=True"  # ending without a last collection is no piece


def test_a_switch_naming_no_piece_is_refused_in_one_line(tmp_path):
    proc, _ = _run(tmp_path, "vocab", plain="openblas,no_such_piece")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert "EXPRESS_PLAIN=openblas,no_such_piece: no runtime piece named no_such_piece" in proc.stderr
