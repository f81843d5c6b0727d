"""Each record is declared once: the Arrow schemas of the tables come from the dataclasses, and an
example's columns that come from its post are carried by name, so a release column is one field."""
from __future__ import annotations

from dataclasses import dataclass, field, fields, make_dataclass

import pyarrow as pa
import pytest

from extractors.examples import SET_BY_EXTRACTION, carried_fields
from pipeline.extract_shards import POST_COLUMNS
from schemas.records import (DISCLOSURES, EXAMPLES, QUARANTINE, RAW_POSTS, Disclosure, Example, QuarantineRow,
                             RawPost, arrow_schema, quarantine_values)


def test_table_schemas_list_the_record_fields_in_order():
    assert RAW_POSTS.names == [f.name for f in fields(RawPost)]
    assert EXAMPLES.names == [f.name for f in fields(Example)] + ["n_masks"]
    assert QUARANTINE.names == [f.name for f in fields(QuarantineRow)]
    assert DISCLOSURES.field("disclosures").type == pa.list_(pa.struct([(f.name, t) for f, t in zip(
        fields(Disclosure), [pa.int64(), pa.int64(), pa.string(), pa.string(), pa.string(), pa.string(), pa.bool_(),
                             pa.float64()])]))
    assert EXAMPLES.field("labels").type == pa.list_(pa.string()) and EXAMPLES.field("created_utc").type == pa.int64()


def test_a_new_field_on_a_record_is_a_new_column_of_its_table():
    @dataclass
    class Scored:
        post_id: str
        score: int = 0
        flair: str | None = None
        tags: list[str] = field(default_factory=list)

    assert arrow_schema(Scored) == pa.schema([("post_id", pa.string()), ("score", pa.int64()),
                                              ("flair", pa.string()), ("tags", pa.list_(pa.string()))])


def test_an_example_carries_every_post_field_it_declares_and_extraction_reads_it_by_name():
    carried = carried_fields()
    assert set(carried) == {f.name for f in fields(Example)} - set(SET_BY_EXTRACTION)
    assert set(carried) <= set(POST_COLUMNS)  # read from posts.parquet, so never left at its default
    with_score = make_dataclass("WithScore", [("score", int, 0)], bases=(Example,))
    assert "score" in carried_fields(with_score)


def test_an_example_field_with_no_source_fails_loudly_instead_of_defaulting():
    with_mood = make_dataclass("WithMood", [("mood", str, "")], bases=(Example,))
    with pytest.raises(TypeError, match=r"WithMood field\(s\) mood have no source"):
        carried_fields(with_mood)


def test_quarantine_rows_are_written_in_the_records_field_order():
    post = RawPost(id="p1", text="hello", source_file="RS.zst", source_line=3)
    row = QuarantineRow("ingest", "nsfw", "p1", "RS.zst", 3, "hello")
    assert quarantine_values("ingest", post, "nsfw") == tuple(getattr(row, f.name) for f in fields(QuarantineRow))


def test_the_gate_reads_the_release_columns_its_examples_suite_names():
    from warehouse.gate.suite import checked_columns

    suite = {"expectations": [{"kwargs": {"column": "created_utc"}}], "id_columns": ["post_id"]}
    assert checked_columns(suite) == ["post_id", "created_utc", "text", "masked_text", "labels"]  # release order
