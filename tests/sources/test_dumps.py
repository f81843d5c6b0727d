import json

import pytest
import zstandard

from schemas.records import Malformed, RawPost
from sources import dumps
from sources.demo import DemoSpec, demo_records, write_demo_dump
from sources.dumps import DumpError, read_dump


def _write_zst(path, lines: list[bytes]) -> None:
    path.write_bytes(zstandard.ZstdCompressor().compress(b"\n".join(lines) + b"\n"))


def test_zst_dump_yields_posts_and_quarantines_bad_lines_with_line_numbers(tmp_path):
    good = json.dumps({"id": "a1", "title": "T", "selftext": "I feel sad", "subreddit": "x"}).encode()
    path = tmp_path / "RS_2024-01.zst"
    _write_zst(path, [good, b'{"id": "a2", "title": "cut', b"\xff\xfe garbage", json.dumps({"title": "no id"}).encode()])
    out = list(read_dump(path))
    assert isinstance(out[0], RawPost) and out[0].text == "T\n\nI feel sad" and out[0].source_line == 1
    assert [(m.source_line, m.reason.split(":")[0]) for m in out[1:]] == [
        (2, "bad_json"), (3, "bad_utf8"), (4, "missing_id")]
    assert all(isinstance(m, Malformed) and m.source_file == str(path) for m in out[1:])


@pytest.mark.parametrize("window_log", [28, 31])
def test_a_dump_whose_frame_declares_a_window_over_128_mib_is_read_to_its_end(tmp_path, window_log):
    """Pushshift compresses with `zstd --long=31`: frames that declare a window of up to 2 GiB, more
    than a zstd decoder accepts by default (128 MiB). The reader and the build's split take them."""
    from pipeline.split import InputFile, SplitStep
    from pipeline.steps import run_step

    lines = [json.dumps({"id": f"p{i}", "title": f"Post {i}", "selftext": "I feel so sad today"}).encode()
             for i in range(300)]
    path = tmp_path / "RS_2024-01.zst"
    # streamed without a content size, as a dump is: the frame header keeps the window asked for
    params = zstandard.ZstdCompressionParameters.from_level(3, window_log=window_log, enable_ldm=True,
                                                            write_content_size=False)
    with open(path, "wb") as fh, zstandard.ZstdCompressor(compression_params=params).stream_writer(fh) as w:
        w.write(b"\n".join(lines) + b"\n")
    data = path.read_bytes()
    assert zstandard.get_frame_parameters(data).window_size == 2**window_log > 128 * 2**20
    with pytest.raises(zstandard.ZstdError, match="too much memory"):  # what a default decoder says
        zstandard.ZstdDecompressor().decompressobj().decompress(data)
    assert [p.id for p in read_dump(path)] == [f"p{i}" for i in range(300)]
    split = run_step(SplitStep, InputFile(str(path), tmp_path / "shards", "RS_2024-01", 100))
    assert [s.lines for s in split.shards] == [100, 100, 100]


def test_utf8_sequence_split_across_chunks_is_decoded(tmp_path, monkeypatch):
    monkeypatch.setattr(dumps, "CHUNK", 7)  # force tiny blocks so multi-byte chars straddle them
    text = "I’m 😢 so sad — ça va"
    path = tmp_path / "RS_2024-02.zst"
    _write_zst(path, [json.dumps({"id": f"p{i}", "title": text}, ensure_ascii=False).encode() for i in range(5)])
    posts = list(read_dump(path))
    assert [p.title for p in posts] == [text] * 5


def test_truncated_zst_stops_with_error_naming_file(tmp_path):
    path = tmp_path / "RS_2024-03.zst"
    _write_zst(path, [json.dumps({"id": f"p{i}", "title": "x" * 50 + str(i)}).encode() for i in range(2000)])
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DumpError, match=r"RS_2024-03.zst.*truncated"):
        list(read_dump(path))


def test_plain_jsonl_is_read_and_comment_becomes_post(tmp_path):
    path = tmp_path / "RC.jsonl"
    path.write_text(json.dumps({"id": "c1", "body": "I'm scared", "link_id": "t3_a1"}) + "\n")
    (post,) = read_dump(path)
    assert post.kind == "comment" and post.text == "I'm scared" and post.link_id == "t3_a1"


def test_demo_corpus_is_deterministic_and_covers_every_case(tmp_path):
    a = write_demo_dump(tmp_path / "a", DemoSpec(posts=500))
    b = write_demo_dump(tmp_path / "b", DemoSpec(posts=500))
    assert a.read_bytes() == b.read_bytes()
    recs = demo_records(DemoSpec(posts=500))
    posts = [r for r in recs if isinstance(r, dict)]
    bodies = " ".join(p["selftext"] for p in posts)
    assert sum(isinstance(r, str) for r in recs) == DemoSpec().malformed
    assert any(p["selftext"] in ("[deleted]", "[removed]") for p in posts)
    assert any(p["over_18"] for p in posts) and any(p["author"] == "AutoModerator" for p in posts)
    assert len({p["selftext"] for p in posts}) < len(posts)  # reposts exist
    for cue in ("I feel", "I'm ", "Feeling ", "I'm not ", "I feel like"):
        assert cue in bodies
