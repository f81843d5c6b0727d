"""The ledger: append-only batches, versions with a hash, supersession, and no half-written batch."""
from __future__ import annotations

import hashlib
import os

import pytest

from review.ledger import Entry, Ledger, LedgerError, consensus, latest_by_reviewer


def entry(item: str, decision: str, reviewer: str = "ana", **kw) -> Entry:
    base = dict(item_id=item, decision=decision, reviewer=reviewer, time="2026-01-01T00:00:00Z", source="test",
                dataset="ds", post_id=f"post-{item}", surface="sad", occurrence=0, occurrences=1)
    return Entry(**{**base, **kw})


def test_each_append_is_a_new_version_and_the_hash_covers_exactly_its_batches(tmp_path):
    ledger = Ledger(tmp_path, "ds")
    assert ledger.version == 0 and ledger.read() == []
    assert ledger.append([entry("a", "accept"), entry("b", "reject")]) == 1
    assert ledger.append([entry("a", "reject")]) == 2
    assert ledger.append([]) == 2  # nothing to add, no empty batch
    files = ledger.batch_files()
    assert [p.name for p in files] == ["000001.jsonl", "000002.jsonl"]
    assert ledger.sha256(1) == hashlib.sha256(files[0].read_bytes()).hexdigest()
    assert ledger.sha256() == hashlib.sha256(files[0].read_bytes() + files[1].read_bytes()).hexdigest()
    assert [e.item_id for e in ledger.read(1)] == ["a", "b"]
    assert [e.item_id for e in ledger.read(since=1)] == ["a"]
    assert (tmp_path / "reviews" / "ds" / "ledger").is_dir()
    with pytest.raises(LedgerError, match="version 5 does not exist"):
        ledger.read(5)


def test_a_crash_while_writing_leaves_no_batch_and_the_ledger_readable(tmp_path, monkeypatch):
    ledger = Ledger(tmp_path, "ds")
    ledger.append([entry("a", "accept")])

    def crash(fd):
        raise OSError("disk gone")

    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(OSError, match="disk gone"):
        ledger.append([entry("b", "reject")])
    monkeypatch.undo()
    assert ledger.version == 1 and [e.item_id for e in ledger.read()] == ["a"]
    assert sorted(p.name for p in ledger.dir.iterdir()) == ["000001.jsonl"]  # no temp file left either


def test_an_existing_batch_is_never_overwritten(tmp_path):
    from common.files import write_atomic

    ledger = Ledger(tmp_path, "ds")
    ledger.append([entry("a", "accept")])
    before = ledger.batch_files()[0].read_bytes()
    with pytest.raises(FileExistsError):
        write_atomic(ledger.batch_files()[0], b"{}\n", overwrite=False)
    assert ledger.batch_files()[0].read_bytes() == before


def test_later_decision_of_the_same_reviewer_supersedes_and_retract_withdraws():
    lines = [entry("a", "accept"), entry("a", "reject"), entry("a", "accept", "bo"),
             entry("b", "reject"), entry("b", "retract"), entry("c", "skip")]
    standing = latest_by_reviewer(lines)
    assert {r: e.decision for r, e in standing["a"].items()} == {"ana": "reject", "bo": "accept"}
    assert "b" not in standing
    assert standing["c"]["ana"].decision == "skip"
    assert consensus(standing["a"]) == "reject"  # a tie rejects
    assert consensus(standing["c"]) is None  # a skip is no verdict
    assert consensus({"x": entry("d", "accept"), "y": entry("d", "accept", "y"), "z": entry("d", "reject", "z")}) == "accept"


def test_a_damaged_ledger_line_is_reported_with_file_and_line(tmp_path):
    ledger = Ledger(tmp_path, "ds")
    ledger.append([entry("a", "accept"), entry("b", "accept")])
    path = ledger.batch_files()[0]
    lines = path.read_text().splitlines()
    path.write_text(lines[0] + "\n" + lines[1].replace('"accept"', '"maybe"') + "\n")
    with pytest.raises(LedgerError, match=r"000001\.jsonl:2: decision must be one of"):
        ledger.read()
    (ledger.dir / "000003.jsonl").write_text("")
    with pytest.raises(LedgerError, match="batch 000002 is missing"):
        ledger.read()


def test_a_context_word_holding_a_unicode_line_separator_reads_back_as_written(tmp_path):
    """Reddit text can hold U+2028/U+0085; the ledger writes them raw, so reading must split on \\n only."""
    ledger = Ledger(tmp_path, "ds")
    e = entry("a", "accept", left=["so\u2028tired", "of\x85this"], right=["today\u2029"])
    ledger.append([e, entry("b", "reject")])
    assert ledger.read() == [e, entry("b", "reject")]
