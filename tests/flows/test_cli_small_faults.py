"""The command line's smaller faults (issue 65, item 8), each through the console script's `main` in
this process: a warehouse path that cannot be one (empty, a file, a folder where the catalog file
belongs) is refused before anything is written; options are their whole names, never abbreviations;
`--version` says the code version; a full disk is one line saying so, not an internal error."""
from __future__ import annotations

import argparse
import errno
import sqlite3

import pytest

from flows.cli import main, parser

DUMP_LINE = '{"id": "a1", "title": "t", "selftext": "I feel so sad today.", "created_utc": 1704067200}\n'


def _exit(argv: list[str]) -> int:
    """The exit code of `express ARGV`, argparse's own exits included."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


@pytest.mark.parametrize("command", [["releases"], ["leaderboard"], ["build", "--input", "x.jsonl"]])
def test_an_empty_warehouse_path_is_refused_not_read_as_the_default(command, capsys, monkeypatch, tmp_path):
    from warehouse import layout

    monkeypatch.setattr(layout, "DEFAULT_WAREHOUSE", tmp_path / "default")  # what '' used to mean
    assert _exit([*command, "--warehouse", ""]) == 2
    err = capsys.readouterr().err
    assert "argument --warehouse: an empty path" in err and not (tmp_path / "default").exists()


def test_the_help_says_where_the_default_warehouse_is(capsys):
    assert _exit(["releases", "--help"]) == 0
    assert "data/ in the express checkout" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("where", ["file", "under-a-file"])
def test_a_warehouse_path_that_is_a_file_is_named_in_one_line_before_anything_is_written(tmp_path, capsys, where):
    dump = tmp_path / "RS_2024-01.jsonl"
    dump.write_text(DUMP_LINE)
    afile = tmp_path / "afile"
    afile.write_text("not a folder\n")
    wh = afile if where == "file" else afile / "wh"
    assert _exit(["build", "--input", str(dump), "--warehouse", str(wh)]) == 2
    err = capsys.readouterr().err
    assert f"warehouse {wh}: " in err and "not a folder" in err and "Errno" not in err
    assert len(err.strip().splitlines()) == 1 and afile.read_text() == "not a folder\n"
    assert _exit(["releases", "--warehouse", str(wh)]) == 2


def test_a_folder_named_like_the_catalog_stops_a_build_before_it_publishes(tmp_path, capsys):
    dump = tmp_path / "RS_2024-01.jsonl"
    dump.write_text(DUMP_LINE)
    wh = tmp_path / "wh"
    (wh / "catalog.duckdb").mkdir(parents=True)
    assert _exit(["build", "--input", str(dump), "--warehouse", str(wh)]) == 2
    err = capsys.readouterr().err
    assert f"{wh / 'catalog.duckdb'}: a folder where the warehouse keeps its DuckDB catalog file" in err
    assert sorted(p.name for p in wh.iterdir()) == ["catalog.duckdb"]  # no run folder, no release


def test_no_parser_of_express_takes_an_abbreviated_option(monkeypatch, capsys):
    made: list[argparse.ArgumentParser] = []
    real = argparse.ArgumentParser.__init__

    def recording(self, *args, **kwargs):  # every parser the command line makes, subcommands' included
        real(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(argparse.ArgumentParser, "__init__", recording)
    parser()
    monkeypatch.undo()
    assert len(made) > 30 and [p.prog for p in made if p.allow_abbrev] == []
    assert _exit(["takedown", "apply", "--purge", "--warehouse", "wh"]) == 2  # not --purge-releases
    assert "unrecognized arguments: --purge" in capsys.readouterr().err


def test_version_prints_the_code_version_manifests_record(capsys):
    from common.versioning import code_version

    assert _exit(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"express {code_version()}"


@pytest.mark.parametrize("raised", [
    OSError(errno.ENOSPC, "No space left on device", "/wh/runs/r/examples.parquet"),
    RuntimeError("(sqlite3.OperationalError) disk I/O error"),
], ids=["enospc", "prefect-sqlite"])
def test_a_full_disk_is_one_line_saying_so_with_exit_2(monkeypatch, capsys, tmp_path, raised):
    from warehouse.layout import Warehouse

    def full(self):
        try:
            raise sqlite3.OperationalError("disk I/O error")
        except sqlite3.OperationalError as exc:
            raise raised from exc

    monkeypatch.setattr(Warehouse, "releases", full)
    assert _exit(["releases", "--warehouse", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("express releases: the disk is full or failing") and "internal error" not in err
    assert "free some space" in err and len(err.strip().splitlines()) == 1
