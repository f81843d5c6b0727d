"""The dump reader parses with orjson; every line must give the record (or quarantine reason) the
stdlib reader gives: UTF-8 decode, `json.loads`, post_from_json. Hostile lines first: those orjson
rejects but `json` reads (NaN, Infinity, lone surrogates), those both reject (with `json`'s message),
integers orjson reads as floats, non-objects, duplicate keys; then seeded random damage."""
from __future__ import annotations

import json
import random

import orjson
import pytest

from schemas.records import Malformed, RawPost
from sources.dumps import RAW_PREVIEW, parse_line
from sources.reddit_json import NotAPost, post_from_json


def stdlib_parse(line: bytes) -> RawPost | Malformed:
    """The reader as it was before orjson: the oracle."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Malformed("f", 1, line[:RAW_PREVIEW].decode("utf-8", "replace"),
                         f"bad_utf8: {exc.reason} at byte {exc.start}")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        return Malformed("f", 1, text[:RAW_PREVIEW], f"bad_json: {exc.msg} at column {exc.colno}")
    try:
        return post_from_json(obj, source="dump", source_file="f", source_line=1)
    except NotAPost as exc:
        return Malformed("f", 1, text[:RAW_PREVIEW], str(exc))


BIG = "123456789012345678901234567890"  # beyond 64 bits: orjson reads it as a float
HOSTILE = [
    # json reads these, orjson rejects them
    b'{"id": "a", "title": "t", "score": NaN}',
    b'{"id": "a", "title": NaN}',
    b'{"id": "a", "title": "t", "created_utc": Infinity, "score": -Infinity}',
    b'{"id": "a", "title": "t", "score": 1e400}',
    b'{"id": "a", "title": "t", "retrieved_on": -1e999}',
    b'{"id": "a", "title": "lone \\ud800 surrogate"}',
    b'{"id": "a", "selftext": "\\udc00 low first", "title": "t"}',
    b'{"id": NaN, "title": "t"}',
    # integers orjson reads as floats
    b'{"id": ' + BIG.encode() + b', "title": "t"}',
    b'{"id": "a", "title": "t", "author": 18446744073709551616, "subreddit": -9223372036854775809}',
    b'{"id": "a", "title": ' + BIG.encode() + b', "selftext": ' + BIG.encode() + b'}',
    b'{"id": "a", "title": "t", "crosspost_parent_list": [{"id": ' + BIG.encode() + b'}]}',
    b'{"id": "a", "title": "t", "crosspost_parent_list": [{"name": 99999999999999999999999}]}',
    b'{"id": "a", "title": "t", "score": ' + BIG.encode() + b', "created_utc": 18446744073709551616}',
    b'{"id": "a", "title": "t", "score": -' + BIG.encode() + b', "over_18": ' + BIG.encode() + b'}',
    b'{"id": "a", "title": "t", "score": 1' + b"0" * 400 + b'}',
    b'{"id": "a", "title": "t", "distinguished": 18446744073709551615, "link_id": 9223372036854775807}',
    b'{"body": "c", "id": "a", "link_id": ' + BIG.encode() + b', "_express_source": ' + BIG.encode() + b'}',
    b'{"id": 1.5, "title": 1e2, "crosspost_parent": 12345678901234567890123}',
    # invalid UTF-8
    b'{"id": "a", "title": "\xff"}',
    b'{"id": "a", "title": "\xed\xa0\x80"}',  # an encoded surrogate
    b'{"id": "a", "title": "\xc0\xaf"}',  # overlong
    b'{"id": "a", "title": "\xf4\x90\x80\x80"}',  # beyond U+10FFFF
    b'{"id": "a", "title": "cut \xe2\x82"}',
    b'{"\xfe": 1, "id": "a", "title": "t"}',
    b'\xef\xbb\xbf{"id": "a", "title": "t"}',  # a byte order mark
    # valid JSON that is not an object, or not a post
    b'[{"id": "a", "title": "t"}]', b'"a string"', b'42', b'null', b'true', b'{}',
    b'{"id": "", "title": "t"}', b'{"id": "a"}', b'{"id": "  ", "body": "x"}',
    # duplicate keys: the last wins in both
    b'{"id": "a", "id": "b", "title": "t"}',
    b'{"id": "a", "title": "first", "title": null, "selftext": "s"}',
    b'{"id": "a", "body": "c", "title": "t", "title": "u"}',
    # what neither accepts
    b'{"id": "a", "title": "t",}', b"{'id': 'a', 'title': 't'}", b'{id: "a", "title": "t"}',
    b'{"id": "a", "title": "t"} // comment', b'{"id": "a", "title": "t"}{"id": "b"}',
    b'{"id": "a", "title": "tab\there"}', b'{"id": "a", "title": "ctl\x01"}', b'{"id": "a", "score": 01}',
    b'{"id": "a", "score": .5}', b'{"id": "a", "score": +1}', b'{"id": "a", "score": 0x10}',
    b'{"id": "a", "title": "t"', b'{"id": "a", "title": "t\\x41"}', b'{"id": "a", "title": "\\u12"}',
    b'\x0c{"id": "a", "title": "t"}', b'{"id": "a",\x00 "title": "t"}',
    # what both accept
    b'  {"id": "a", "title": "t", "score": -0, "created_utc": 1E3}  \r',
    b'{"id": "a", "title": "\\ud83d\\ude00 \\u0000 \\/ \xe2\x80\x99", "score": 1.000000000000000000001}',
    b'{"id": "a", "title": "t", "score": 4.9e-325, "created_utc": 1.7976931348623157e308}',
    b'{"id": "a", "title": "t", "score": "7", "over_18": "yes", "stickied": 0, "author": null}',
    b'{"id": 123, "title": ["x"], "selftext": {"y": 1}, "subreddit": true, "author": 2.5}',
    b'{"id": "a", "title": "t", "deep": ' + b"[" * 500 + b"]" * 500 + b'}',
    b'{"id": "a", "title": "' + b"long " * 1000 + b'"}',
]


@pytest.mark.parametrize("line", HOSTILE, ids=[repr(h[:40]) for h in HOSTILE])
def test_a_hostile_line_reads_exactly_as_the_stdlib_reader_reads_it(line):
    assert parse_line(line, "f", 1, "dump") == stdlib_parse(line)


def test_the_table_reaches_both_parsers_disagreements():
    """The table is worth its name: it holds lines orjson rejects that `json` reads, integers
    orjson reads differently, and lines each path quarantines for each reason."""
    def orjson_reads(line: bytes) -> bool:
        try:
            orjson.loads(line)
            return True
        except orjson.JSONDecodeError:
            return False

    oracle = [stdlib_parse(line) for line in HOSTILE]
    assert sum(isinstance(r, RawPost) and not orjson_reads(line) for line, r in zip(HOSTILE, oracle, strict=True)) >= 6
    assert sum(orjson_reads(line) and orjson.loads(line) != json.loads(line) for line in HOSTILE
               if isinstance(stdlib_parse(line), RawPost)) >= 8
    reasons = {r.reason.split(":")[0] for r in oracle if isinstance(r, Malformed)}
    assert reasons == {"bad_utf8", "bad_json", "not_an_object", "missing_id", "no_text_fields"}


def test_an_integer_beyond_64_bits_keeps_its_digits_where_a_string_is_read():
    post = parse_line(b'{"id": ' + BIG.encode() + b', "title": "t", "author": ' + BIG.encode() + b'}', "f", 1, "dump")
    assert post.id == BIG and post.author == BIG  # not "1.2345678901234568e+29"


def test_an_integer_beyond_64_bits_in_any_field_a_post_reads_gives_what_the_stdlib_reader_gives():
    """Every RawPost field name and every dump name post_from_json reads, in a submission and in a
    comment: a field newly read as a string must be in reddit_json.STRING_FIELDS, or this fails."""
    names = [f for f in RawPost.__slots__] + ["body", "retrieved_utc", "_express_source", "crosspost_parent_list"]
    for base in ({"id": "a", "title": "t", "selftext": "s"}, {"id": "a", "body": "c", "link_id": "t3_b"}):
        for name in names:
            line = json.dumps({**base, name: "@"}).replace('"@"', BIG).encode()
            assert parse_line(line, "f", 1, "dump") == stdlib_parse(line), name


def test_an_infinite_number_reads_as_zero_instead_of_stopping_the_reader():
    post = parse_line(b'{"id": "a", "title": "t", "created_utc": Infinity, "score": "1e400", "retrieved_on": 1e999}',
                      "f", 1, "dump")
    assert (post.created_utc, post.score, post.retrieved_on) == (0, 0, 0)


def test_a_line_nested_too_deeply_for_either_parser_is_quarantined_not_raised():
    line = b'{"id": "a", "title": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(RecursionError):
        json.loads(line)  # the stdlib reader stopped here, ending the whole file
    rec = parse_line(line, "RS_x.zst", 9, "dump")
    assert isinstance(rec, Malformed) and (rec.source_file, rec.source_line) == ("RS_x.zst", 9)
    assert rec.reason == "bad_json: nested too deeply" and rec.raw == line[:RAW_PREVIEW].decode()


TOKENS = [b"NaN", b"Infinity", b"-", b"1e400", b"\\ud800", b"\\udc00", b"\\u00e9", b"\xff", b"\xc3", b"\xe2\x82",
          b'"', b"\\", b",", b"}", b"{", b"[", b"]", b":", b"null", b"true", b"0", b"1" * 21, b"\x00", b"\t",
          b" ", b"\r", b'"id"', b'"title"', b'"body"', b"e", b".", b"\xef\xbb\xbf"]


def test_randomly_damaged_lines_read_exactly_as_the_stdlib_reader_reads_them():
    rng = random.Random(17)
    good = [json.dumps({"id": f"p{i}", "title": "I feel sad", "selftext": "x " * rng.randint(0, 30),
                        "score": rng.randint(-5, 10**6), "created_utc": 1_700_000_000 + i, "over_18": False,
                        "author": "u", "crosspost_parent_list": [{"id": "q"}] if i % 7 == 0 else []},
                       ensure_ascii=rng.random() < 0.5).encode() for i in range(50)]
    differing, kinds = [], set()
    for _ in range(4000):
        line = bytearray(rng.choice(good))
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(line) + 1)
            op = rng.random()
            if op < 0.5:
                line[at:at] = rng.choice(TOKENS)
            elif op < 0.8:
                del line[at:at + rng.randint(1, 4)]
            else:
                line[at:at + 1] = bytes([rng.randrange(256)])
        line = bytes(line)
        expected = stdlib_parse(line)
        kinds.add(type(expected).__name__ if isinstance(expected, RawPost) else expected.reason.split(":")[0])
        if parse_line(line, "f", 1, "dump") != expected:
            differing.append(line)
    assert differing == []
    assert {"RawPost", "bad_json", "bad_utf8"} <= kinds
