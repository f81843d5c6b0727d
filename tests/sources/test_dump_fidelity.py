"""Dump readers against real-world damage: field drift, inserted garbage, corrupt and truncated zstd."""
import json
import random

import pytest
import zstandard

from schemas.records import Malformed, RawPost
from sources.dumps import DumpError, read_dump


def _lines(n: int) -> list[bytes]:
    return [json.dumps({"id": f"p{i}", "title": f"title {i}", "selftext": "I feel fine " * 5,
                        "subreddit": "s", "created_utc": 1700000000 + i}).encode() for i in range(n)]


def _zst(path, lines: list[bytes]) -> None:
    path.write_bytes(zstandard.ZstdCompressor().compress(b"\n".join(lines) + b"\n"))


def test_ndjson_with_field_drift_is_read_leniently(tmp_path):
    path = tmp_path / "RS_2011-05.ndjson"
    rows = [
        {"id": "a", "title": "T", "selftext": "x", "created_utc": "1304208000", "over_18": "true", "score": "7"},
        {"id": "b", "title": "U", "brand_new_field": {"nested": [1, 2]}, "edited": 1304208100},
        {"id": "c", "title": "V", "selftext": None, "author": None, "crosspost_parent_list": [{"id": "zz"}]},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    a, b, c = read_dump(path)
    assert (a.created_utc, a.over_18, a.score) == (1304208000, True, 7)
    assert b.text == "U" and b.selftext == "" and b.author == ""
    assert c.crosspost_parent == "t3_zz" and c.text == "V"


def test_random_bytes_inserted_into_lines_are_quarantined_with_file_and_line(tmp_path):
    rng = random.Random(5)
    lines = _lines(40)
    damaged = {3, 11, 12, 30}
    for i in damaged:
        pos = rng.randrange(1, len(lines[i]) - 1)
        junk = bytes(rng.choice([0xFF, 0xC3, 0x00, 0x7B, 0x22, 0x80]) for _ in range(6))
        lines[i] = lines[i][:pos] + junk + lines[i][pos:]
    for suffix in (".jsonl", ".zst"):
        path = tmp_path / f"RS_2020-01{suffix}"
        if suffix == ".zst":
            _zst(path, lines)
        else:
            path.write_bytes(b"\n".join(lines) + b"\n")
        out = list(read_dump(path))
        bad = [r for r in out if isinstance(r, Malformed)]
        assert len(out) == 40
        assert sorted(m.source_line for m in bad) == sorted(i + 1 for i in damaged)
        assert all(m.source_file == str(path) and m.raw and m.reason.split(":")[0] in ("bad_utf8", "bad_json")
                   for m in bad)
        assert [r.id for r in out if isinstance(r, RawPost)] == [f"p{i}" for i in range(40) if i not in damaged]


def test_corrupt_zst_stops_with_error_naming_file_and_position(tmp_path):
    path = tmp_path / "RC_2024-04.zst"
    _zst(path, _lines(3000))
    data = bytearray(path.read_bytes())
    for k in range(len(data) // 2, len(data) // 2 + 64):
        data[k] ^= 0x5A
    path.write_bytes(bytes(data))
    seen = []
    with pytest.raises(DumpError) as err:
        for rec in read_dump(path):
            seen.append(rec)
    msg = str(err.value)
    assert "RC_2024-04.zst" in msg and "byte" in msg and f"{len(seen)} complete lines" in msg


def test_truncated_zst_error_says_how_far_it_got(tmp_path):
    path = tmp_path / "RS_2024-05.zst"
    _zst(path, _lines(3000))
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * 0.7)])
    seen = []
    with pytest.raises(DumpError, match=r"RS_2024-05.zst: truncated.*ends at byte \d+") as err:
        for rec in read_dump(path):
            seen.append(rec)
    assert seen and f"{len(seen)} complete lines were read" in str(err.value)


def test_missing_dump_file_is_a_clear_error(tmp_path):
    with pytest.raises(DumpError, match="no such file"):
        list(read_dump(tmp_path / "RS_1999-01.zst"))


def test_typed_values_read_the_same_as_their_lenient_conversion(tmp_path):
    """The fast paths for values that already have the right type (ints, strs, bools) must give
    what the lenient conversion gives: int(float(v)) for numbers, str(v) for strings, truthiness."""
    def lenient_int(v):
        try:
            return int(float(v))
        except (TypeError, ValueError):
            return 0

    numbers = [0, 7, -3, 2**53, 2**53 + 1, -(2**53) - 1, 10**17 + 1, 7.9, "7", "1e3", "x", None, True, [1]]
    path = tmp_path / "RS_2020-02.jsonl"
    path.write_text("\n".join(json.dumps({"id": f"n{k}", "title": "t", "created_utc": v, "score": v,
                                          "retrieved_on": v, "over_18": v, "stickied": v, "author": v})
                              for k, v in enumerate(numbers)) + "\n")
    posts = list(read_dump(path))
    assert [p.id for p in posts] == [f"n{k}" for k in range(len(numbers))]  # every line read, none dropped
    for post, v in zip(posts, numbers, strict=True):
        assert (post.created_utc, post.score, post.retrieved_on) == (lenient_int(v),) * 3
        truthy = v.strip().lower() in {"true", "1", "yes"} if isinstance(v, str) else bool(v)
        assert post.over_18 is truthy and post.stickied is truthy
        assert post.author == ("" if v is None else str(v))


def test_every_field_of_a_dump_line_lands_in_its_own_attribute():
    """post_from_json builds RawPost positionally (it runs for every line): a distinct value in every
    field the reader maps must come out in the attribute of that name, and nowhere else."""
    from dataclasses import fields

    from sources.reddit_json import post_from_json

    line = {"id": "abc", "title": "the title", "selftext": "the body", "subreddit": "sub", "author": "someone",
            "created_utc": 11, "over_18": True, "score": 22, "distinguished": "moderator", "stickied": True,
            "removed_by_category": "reddit", "link_id": "t3_link", "_express_source": "praw",
            "retrieved_on": 33, "crosspost_parent": "t3_parent"}
    post = post_from_json(line, source="dump", source_file="RS_x.zst", source_line=44)
    assert {f.name: getattr(post, f.name) for f in fields(RawPost)} == {
        "id": "abc", "text": "the title\n\nthe body", "subreddit": "sub", "author": "someone", "created_utc": 11,
        "title": "the title", "selftext": "the body", "over_18": True, "score": 22, "distinguished": "moderator",
        "stickied": True, "removed_by_category": "reddit", "kind": "submission", "link_id": "t3_link",
        "source": "praw", "source_file": "RS_x.zst", "source_line": 44, "retrieved_on": 33,
        "crosspost_parent": "t3_parent"}
    comment = post_from_json({"id": "c1", "body": "a reply", "link_id": "t3_abc"}, source="dump")
    assert (comment.kind, comment.text, comment.selftext, comment.title, comment.source) == \
        ("comment", "a reply", "a reply", "", "dump")


def test_reddit_escaped_titles_and_bodies_are_read_as_their_authors_typed_them(tmp_path):
    """One decoding pass at read (an author's own `&lt;` stays), the editor's `&#x200B;` paragraphs
    gone and its `&nbsp;` a space, quote lines starting with `>`, Markdown as written."""
    from tests.sources.reddit_shapes import ENTITIES, dump_lines, expected_texts

    path = tmp_path / "RS_2024-04.ndjson"
    path.write_bytes(b"\n".join(dump_lines()) + b"\n")
    posts = {p.id: p for p in read_dump(path)}
    assert {k: p.text for k, p in posts.items()} == expected_texts()
    assert posts["rt1"].title == "Opinions & Advice: I'm so scared of the dark <3"
    assert posts["rc1"].selftext.startswith(">I feel") and "**Edit:**" in posts["rt1"].text
    typed_entity = {"rt3"}  # the author wrote `&lt;` in Markdown: decoding twice would change it
    assert not [(k, e) for k, p in posts.items() if k not in typed_entity for e in ENTITIES if e in p.text]
    assert not any(c in p.text for p in posts.values() for c in "\u200b\u00a0")


def test_a_praw_pull_of_the_same_posts_reads_the_same_text(tmp_path, monkeypatch):
    """praw asks Reddit for raw_json=1, so its rows hold the typed Markdown: read, they give what the
    dump lines give (the fake server escapes texts for any other request, as Reddit does)."""
    from schemas.config import SourcesConfig
    from sources.praw_pulls import pull
    from sources.praw_source import make_reddit
    from tests.fakes.reddit_server import FakeReddit
    from tests.sources.reddit_shapes import dump_lines, expected_texts, served_comments, served_submissions

    for key, value in (("praw_client_id", "cid"), ("praw_client_secret", "secret"), ("praw_user_agent", "express-tests")):
        monkeypatch.setenv(key, value)
    with FakeReddit(served_submissions(), served_comments()) as fake:
        cfg = SourcesConfig(kind="praw", oauth_url=fake.url, reddit_url=fake.url, listing="new",
                            subreddits=("offmychest",), include_comments=True)
        result = pull(cfg, [], tmp_path / "praw", reddit=make_reddit(cfg), log=lambda _line: None)
    listings = [r for r in fake.requests if r["method"] == "GET"]
    assert listings and all(r["params"].get("raw_json") == "1" for r in listings)
    pulled = {p.id: p for p in read_dump(result.path)}
    dump = tmp_path / "RS_2024-04.ndjson"
    dump.write_bytes(b"\n".join(dump_lines()) + b"\n")
    dumped = {p.id: p for p in read_dump(dump)}
    assert {k: p.text for k, p in pulled.items()} == {k: p.text for k, p in dumped.items()} == expected_texts()
    assert {k: (p.title, p.selftext) for k, p in pulled.items()} == {k: (p.title, p.selftext) for k, p in dumped.items()}
