"""common/files.py, the one way to write a file: all or nothing, fsynced, one temp-name scheme that
a killed writer leaves behind and `remove_temps` clears."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from common.files import (TEMP_GLOB, is_temp, place, place_folder, remove_temps, temp_path, write_atomic,
                          write_json, writing)

REPO = Path(__file__).resolve().parents[2]


def test_an_error_inside_the_block_leaves_the_old_file_and_no_temp_file(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text("old\n")
    with pytest.raises(RuntimeError, match="half way"):
        with writing(path, "w") as fh:
            fh.write("new, half written\n")
            raise RuntimeError("half way")
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["out.jsonl"]


def test_a_file_appears_only_when_the_block_ends(tmp_path):
    path = tmp_path / "sub" / "lines.jsonl.zst"
    with writing(path, "wb") as fh:
        fh.write(b"abc")
        assert not path.exists() and is_temp(Path(fh.name)) and Path(fh.name).name.endswith(".zst")
    assert path.read_bytes() == b"abc" and os.listdir(path.parent) == ["lines.jsonl.zst"]


def test_the_written_file_is_fsynced_before_it_is_renamed_and_the_folder_after(tmp_path, monkeypatch):
    synced, real = [], os.fsync

    def fsync(fd):
        synced.append(os.fstat(fd).st_ino)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    path = tmp_path / "config.json"
    write_json(path, {"a": 1})
    assert path.read_text() == '{\n  "a": 1\n}\n'
    assert synced == [path.stat().st_ino, tmp_path.stat().st_ino]  # the file that became config.json, its folder
    synced.clear()
    write_atomic(tmp_path / "cache.json", b"{}", fsync=False)
    assert synced == [] and (tmp_path / "cache.json").read_bytes() == b"{}"


def test_a_file_that_must_not_be_overwritten_is_refused_whole(tmp_path):
    path = tmp_path / "000001.jsonl"
    write_atomic(path, b"first\n", overwrite=False)
    with pytest.raises(FileExistsError):
        write_atomic(path, b"second\n", overwrite=False)
    assert path.read_bytes() == b"first\n" and os.listdir(tmp_path) == ["000001.jsonl"]


KILLED = """
import os, signal, sys
from pathlib import Path
from common.files import writing
with writing(Path(sys.argv[1]), "w") as fh:
    fh.write("new, half written\\n")
    fh.flush()
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_writer_leaves_the_old_file_and_a_temp_file_that_remove_temps_clears(tmp_path):
    path = tmp_path / "run" / "examples.parquet"
    path.parent.mkdir()
    path.write_text("old")
    proc = subprocess.run([sys.executable, "-c", KILLED, str(path)], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == -signal.SIGKILL
    (left,) = [p for p in path.parent.iterdir() if p != path]
    assert path.read_text() == "old" and left.match(TEMP_GLOB) and left.read_text() == "new, half written\n"
    assert remove_temps(tmp_path) == [] and left.exists()  # not deep: only the folder itself
    assert remove_temps(tmp_path, deep=True) == [left] and os.listdir(path.parent) == ["examples.parquet"]


def test_one_scheme_keeps_the_suffix_and_a_fixed_tag_names_the_same_temp_again(tmp_path):
    final = tmp_path / "near.npy"
    assert temp_path(final, "step") == tmp_path / ".tmp-near-step.npy" == temp_path(final, "step")
    assert temp_path(final) != temp_path(final) and temp_path(final).suffix == ".npy"
    assert temp_path(tmp_path / "v2").name.startswith(".tmp-v2-") and all(
        is_temp(temp_path(tmp_path / n)) for n in ("a.json", "v2", ".commit-journal.json"))


def test_a_finished_file_and_folder_are_placed_and_a_folder_never_over_another(tmp_path):
    part = tmp_path / "pull.jsonl.part"
    part.write_text("rows\n")
    place(part, tmp_path / "pull.jsonl")
    assert (tmp_path / "pull.jsonl").read_text() == "rows\n" and not part.exists()
    for name in ("one", "two"):
        folder = temp_path(tmp_path / "v1")
        folder.mkdir()
        (folder / "manifest.json").write_text(name)
        if name == "one":
            place_folder(folder, tmp_path / "v1")
        else:
            with pytest.raises(FileExistsError):
                place_folder(folder, tmp_path / "v1")
    assert (tmp_path / "v1" / "manifest.json").read_text() == "one"
    assert [p.name for p in remove_temps(tmp_path)] == [folder.name] and not folder.exists()
