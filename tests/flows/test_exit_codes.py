"""One exit code for user errors (2) across commands, another for internal errors (1)
(common/errors.py, documented in the README)."""
from __future__ import annotations

import json

import pytest

from common.errors import INTERNAL_ERROR, USER_ERROR
from flows import cli
from flows.cli import main as express


@pytest.mark.parametrize("args", [
    ["build", "--input", "{tmp}/missing.zst"],
    ["build", "--input", "{tmp}/in.jsonl", "--config", "{tmp}/bad.toml"],
    ["extract", "--input", "{tmp}/bad.jsonl", "--output", "{tmp}/out.jsonl"],
    ["report", "--release", "v9"],
    ["diff", "v1", "v2"],
    ["vocab", "check", "--file", "{tmp}/vocab.tsv"],
    ["score", "--predictions", "{tmp}/missing.jsonl"],
])
def test_user_errors_exit_2_with_one_line(args, tmp_path, capsys):
    (tmp_path / "in.jsonl").write_text(json.dumps({"id": "a", "selftext": "x"}) + "\n")
    (tmp_path / "bad.toml").write_text("[filters]\nno_such_key = 1\n")
    (tmp_path / "bad.jsonl").write_text('{"id": 1, "text": "fine"}\nnot json\n')
    (tmp_path / "vocab.tsv").write_text("not a vocabulary\n")
    code = express([a.format(tmp=tmp_path) for a in args] + ["--warehouse", str(tmp_path / "wh")]
                   if args[0] in ("build", "report", "diff") else [a.format(tmp=tmp_path) for a in args])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == USER_ERROR, err
    assert len(err) >= 1 and err[-1].startswith(f"express {args[0]}")
    assert "Traceback" not in "\n".join(err)


def test_an_internal_error_exits_1_and_points_at_debug(monkeypatch, tmp_path, capsys):
    def broken(args):
        raise RuntimeError("a bug")

    parser = cli.parser

    def patched():
        p = parser()
        p._subparsers._group_actions[0].choices["releases"].set_defaults(func=broken)
        return p

    monkeypatch.setattr(cli, "parser", patched)
    assert express(["releases", "--warehouse", str(tmp_path)]) == INTERNAL_ERROR
    assert "internal error: RuntimeError: a bug (run again with --debug" in capsys.readouterr().err
