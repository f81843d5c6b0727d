"""The streaming Parquet writer: dict rows and record rows give the same file, in order."""
import hashlib
from dataclasses import fields

import pyarrow.parquet as pq
import pytest

from common.parquet import ParquetSink, iter_rows
from filters.duplicate_index import KEYS
from schemas.records import RAW_POSTS, RawPost


def _posts(n: int) -> list[RawPost]:
    return [RawPost(id=f"p{k}", text=f"I’m fine 😬 **{k}**\n\nhttps://x.io", subreddit="s", author="",
                    created_utc=2**40 + k, over_18=k % 3 == 0, score=-k, source_line=k) for k in range(n)]


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_records_and_their_dict_rows_write_the_same_bytes_across_batches(tmp_path):
    posts = _posts(11)
    rows = [{f.name: getattr(p, f.name) for f in fields(RawPost)} for p in posts]
    with ParquetSink(tmp_path / "dicts.parquet", RAW_POSTS, batch_rows=4) as a, \
         ParquetSink(tmp_path / "records.parquet", RAW_POSTS, batch_rows=4) as b:
        for post, row in zip(posts, rows, strict=True):
            a.write(row)
            b.write_record(post)
    assert _sha(tmp_path / "dicts.parquet") == _sha(tmp_path / "records.parquet")
    assert list(iter_rows(tmp_path / "records.parquet")) == rows
    assert pq.ParquetFile(tmp_path / "records.parquet").metadata.num_row_groups == 3


def test_missing_keys_are_nulls_and_a_one_column_record_is_written(tmp_path):
    class Key:
        key = b"\x01" * 16

    with ParquetSink(tmp_path / "keys.parquet", KEYS) as keys, ParquetSink(tmp_path / "raw.parquet", RAW_POSTS) as raw:
        keys.write_record(Key())
        keys.write({"key": b"\x02" * 16})
        raw.write({"id": "x", "text": "t", "not_a_column": 1})
    assert [r["key"] for r in iter_rows(tmp_path / "keys.parquet")] == [b"\x01" * 16, b"\x02" * 16]
    row = next(iter_rows(tmp_path / "raw.parquet"))
    assert (row["id"], row["text"], row["author"], row["score"]) == ("x", "t", None, None)


def test_an_empty_sink_still_writes_a_file_with_the_schema(tmp_path):
    with ParquetSink(tmp_path / "empty.parquet", RAW_POSTS):
        pass
    f = pq.ParquetFile(tmp_path / "empty.parquet")
    assert f.metadata.num_rows == 0 and f.schema_arrow.names == RAW_POSTS.names


def test_tuples_read_back_like_rows_in_the_asked_column_order(tmp_path):
    from common.parquet import iter_tuples

    with ParquetSink(tmp_path / "p.parquet", RAW_POSTS, batch_rows=3) as sink:
        for post in _posts(8):
            sink.write_record(post)
    columns = ["text", "id", "source_line", "over_18"]
    rows = list(iter_rows(tmp_path / "p.parquet", columns))
    assert list(iter_tuples(tmp_path / "p.parquet", columns)) == [tuple(r[c] for c in columns) for r in rows]
    assert [t[1] for t in iter_tuples(tmp_path / "p.parquet", columns)] == [f"p{k}" for k in range(8)]


def test_arrow_batches_and_rows_mixed_keep_their_order_and_a_foreign_schema_is_refused(tmp_path):
    """The release writer hands each split its Arrow batches; rows before and after stay in order,
    row groups still close at about batch_rows, and a batch of another schema is an error."""
    import pyarrow as pa
    import pytest

    posts = _posts(12)
    rows = [{f.name: getattr(p, f.name) for f in fields(RawPost)} for p in posts]
    batch = pa.RecordBatch.from_pylist(rows[2:9], schema=RAW_POSTS)
    with ParquetSink(tmp_path / "mixed.parquet", RAW_POSTS, batch_rows=4) as sink:
        sink.write(rows[0])
        sink.write_record(posts[1])
        sink.write_batch(batch.slice(0, 3))
        sink.write_batch(batch.slice(3))
        for post in posts[9:]:
            sink.write_record(post)
        with pytest.raises(ValueError, match="batch schema differs"):
            sink.write_batch(pa.RecordBatch.from_pylist([{"id": "x"}]))
    assert list(iter_rows(tmp_path / "mixed.parquet")) == rows
    assert sink.rows == 12 and pq.ParquetFile(tmp_path / "mixed.parquet").metadata.num_row_groups <= 4


def test_quarantine_values_land_in_their_columns_as_the_dict_rows_did(tmp_path):
    from schemas.records import QUARANTINE, Malformed, quarantine_values

    post = RawPost(id="p1", text="I feel sad", subreddit="s", author="a", created_utc=1, source_file="RS.zst",
                   source_line=7)
    bad = Malformed("RS.zst", 8, '{"id": ', "bad_json: Expecting value at column 8")
    with ParquetSink(tmp_path / "q.parquet", QUARANTINE, batch_rows=2) as sink:
        sink.write_values(quarantine_values("ingest", post, "no_disclosure", False))
        sink.write_values(quarantine_values("ingest", post, "language"))
        sink.write_values(quarantine_values("ingest", bad, "ignored"))
    assert list(iter_rows(tmp_path / "q.parquet")) == [
        {"stage": "ingest", "reason": "no_disclosure", "post_id": "p1", "source_file": "RS.zst", "source_line": 7,
         "raw": None},
        {"stage": "ingest", "reason": "language", "post_id": "p1", "source_file": "RS.zst", "source_line": 7,
         "raw": "I feel sad"},
        {"stage": "ingest", "reason": "bad_json: Expecting value at column 8", "post_id": None,
         "source_file": "RS.zst", "source_line": 8, "raw": '{"id": '},
    ]


def test_a_row_of_the_wrong_width_is_refused_not_shifted(tmp_path):
    from schemas.records import QUARANTINE

    with ParquetSink(tmp_path / "q.parquet", QUARANTINE) as sink:
        with pytest.raises(ValueError, match="5 values for 6 columns"):
            sink.write_values(("ingest", "x", "p1", "RS.zst", 7))
