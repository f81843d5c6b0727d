"""The one JSONL reader: line numbers count every line, and each kind of bad line names file and line."""
import json

import pytest

from common.jsonl import JsonlError, parse_jsonl, read_jsonl


def test_rows_keep_their_file_line_numbers_across_blank_lines(tmp_path):
    f = tmp_path / "rows.jsonl"
    f.write_bytes(b'{"a": 1}\n\n   \n{"a": 2}\r\n{"a": 3}')  # blank lines, a CRLF, no final newline
    assert list(read_jsonl(f)) == [(1, {"a": 1}), (4, {"a": 2}), (5, {"a": 3})]


def test_a_unicode_line_separator_inside_a_string_does_not_split_the_line(tmp_path):
    """json.dumps(ensure_ascii=False) leaves U+2028/U+2029 raw; str.splitlines() would cut there."""
    f = tmp_path / "rows.jsonl"
    rows = [{"text": "one\u2028two\u2029three\x85four"}, {"text": "next"}]
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    assert list(read_jsonl(f)) == [(1, rows[0]), (2, rows[1])]


@pytest.mark.parametrize("bad, message", [
    (b"{oops", "not valid JSON (Expecting property name enclosed in double quotes column 2)"),
    (b"[1, 2]", "each line must be a JSON object"),
    (b'"just a string"', "each line must be a JSON object"),
    (b'{"text": "caf\xe9"}', "not valid UTF-8 (invalid continuation byte at byte 13)"),
    (b"[" * 100_000, "not valid JSON (nested too deeply)"),
])
def test_a_bad_line_names_the_file_and_its_line(tmp_path, bad, message):
    f = tmp_path / "bad.jsonl"
    f.write_bytes(b'{"ok": true}\n\n' + bad + b'\n{"ok": true}\n')
    with pytest.raises(JsonlError) as got:
        list(read_jsonl(f))
    assert str(got.value) == f"{f}:3: {message}"


def test_a_caller_gets_its_own_error_class_with_the_same_wording():
    class ReviewError(ValueError):
        pass

    with pytest.raises(ReviewError, match=r"^decisions.jsonl:2: not valid JSON"):
        list(parse_jsonl(['{"a": 1}', "{nope"], "decisions.jsonl", ReviewError))


def test_rows_stream_without_reading_past_the_one_asked_for():
    def lines():
        yield '{"a": 1}\n'
        raise AssertionError("read ahead")

    assert next(parse_jsonl(lines(), "stream.jsonl")) == (1, {"a": 1})


def test_a_missing_file_is_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        list(read_jsonl(tmp_path / "gone.jsonl"))
