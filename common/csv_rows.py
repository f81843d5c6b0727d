"""The one way to number CSV rows: each row with the file line it starts on, so an error points
where a user opening the file looks, even when a quoted field spans several lines."""
from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any


def rows_with_start_lines(reader: csv.DictReader) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line the row starts on, row as DictReader would give it), lines counted from 1.

    Counting rows (`enumerate(reader, start=2)`) is wrong after a multi-line quoted field or a
    blank line, and `line_num` is the line a row ENDS on. So this reads the DictReader's own
    csv.reader: a row starts one line after the previous record ended (header or blank lines
    included). Blank lines are skipped, as DictReader does. The file must be opened with
    newline="" so that csv sees the newlines inside quoted fields."""
    fields = reader.fieldnames or []  # reads the header, if not read yet
    raw = reader.reader
    ended = raw.line_num
    for record in raw:
        start, ended = ended + 1, raw.line_num
        if not record:
            continue
        row: dict[str, Any] = dict(zip(fields, record))
        if len(record) > len(fields):
            row[reader.restkey] = record[len(fields):]
        for key in fields[len(record):]:
            row[key] = reader.restval
        yield start, row
