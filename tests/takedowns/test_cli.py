"""`express takedown add|list|verify` as a user meets them: a bad request is a short error naming
what is wrong (exit 2, nothing written), a damaged ledger names its file and line."""
from __future__ import annotations

from flows.cli import main


def test_add_then_list_shows_posts_as_given_and_authors_only_hashed(tmp_path, capsys):
    wh = str(tmp_path / "wh")
    assert main(["takedown", "add", "--post", "t3_abc12", "--author", "Some_Writer", "--reason", "asked",
                 "--warehouse", wh]) == 0
    assert main(["takedown", "list", "--warehouse", wh]) == 0
    out = capsys.readouterr().out
    assert "t3_abc12" in out and "author " in out and "some_writer" not in out.lower()
    assert "1 post(s) taken down" in out and "1 author(s)" in out


def test_a_bad_request_exits_2_with_a_short_message_and_writes_nothing(tmp_path, capsys):
    wh = tmp_path / "wh"
    assert main(["takedown", "add", "--post", "not an id", "--reason", "x", "--warehouse", str(wh)]) == 2
    assert main(["takedown", "add", "--reason", "x", "--warehouse", str(wh)]) == 2
    err = capsys.readouterr().err
    assert "'not an id' is not a Reddit post id" in err and "nothing to take down" in err
    assert "Traceback" not in err and not (wh / "takedowns" / "ledger").exists()


def test_a_damaged_ledger_is_named_with_its_line(tmp_path, capsys):
    wh = tmp_path / "wh"
    assert main(["takedown", "add", "--post", "abc", "--reason", "x", "--warehouse", str(wh)]) == 0
    batch = wh / "takedowns" / "ledger" / "000001.jsonl"
    batch.write_text(batch.read_text() + "{not json\n")
    assert main(["takedown", "verify", "--warehouse", str(wh)]) == 2
    assert f"{batch}:2: not valid JSON" in capsys.readouterr().err


def test_verify_of_a_warehouse_without_takedowns_is_clean(tmp_path, capsys):
    assert main(["takedown", "verify", "--warehouse", str(tmp_path / "wh")]) == 0
    assert "no taken-down post" in capsys.readouterr().out
