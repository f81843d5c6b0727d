"""The takedown ledger: append-only batches, ids kept as given and matched with or without `t3_`,
authors kept only as a keyed hash whose key the warehouse makes once, readable by its owner alone."""
import json
import stat

import pytest

from common.matching.takedowns import hash_author
from warehouse.layout import Warehouse
from warehouse.ledgers.takedowns import TakedownError, TakedownLedger


def test_posts_are_stored_as_given_and_matched_with_or_without_t3(tmp_path):
    ledger = TakedownLedger(tmp_path)
    assert ledger.add(posts=["t3_AbC12", "xyz9"], reason="asked by the writer") == 1
    lines = [json.loads(x) for x in (tmp_path / "takedowns" / "ledger" / "000001.jsonl").read_text().splitlines()]
    assert [x["post_id"] for x in lines] == ["t3_AbC12", "xyz9"]
    taken = ledger.current()
    assert taken.posts == {"abc12", "xyz9"}
    matcher = taken.matcher()
    assert matcher.id_hit("abc12") and matcher.id_hit("t3_XYZ9") and not matcher.id_hit("other")


def test_an_author_is_stored_only_as_a_keyed_hash_with_a_private_key(tmp_path):
    ledger = TakedownLedger(tmp_path)
    ledger.add(authors=["u/Someone_Else"], reason="opted out")
    raw = (tmp_path / "takedowns" / "ledger" / "000001.jsonl").read_text()
    assert "someone" not in raw.lower()
    key_file = Warehouse(tmp_path).takedowns.key
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = ledger.key()
    assert json.loads(raw)["author_hmac"] == hash_author(key, "someone_else")
    matcher = ledger.current().matcher()
    assert matcher.author_hit("Someone_Else") and matcher.author_hit("SOMEONE_ELSE") and not matcher.author_hit("someone")
    ledger.add(authors=["another"], reason="opted out")
    assert ledger.key() == key  # made once


def test_batches_are_appended_never_rewritten_and_versioned(tmp_path):
    ledger = TakedownLedger(tmp_path)
    ledger.add(posts=["a1"], reason="one")
    first = ledger.sha256(1)
    ledger.add(posts=["b2"], reason="two")
    assert ledger.version == 2 and ledger.sha256(1) == first != ledger.sha256()
    assert ledger.current(1).posts == {"a1"} and ledger.current().posts == {"a1", "b2"}


@pytest.mark.parametrize("post, author, reason", [("not an id!", None, "x"), ("abc", None, " "),
                                                   (None, "[deleted]", "x")])
def test_a_bad_request_is_refused_and_writes_nothing(tmp_path, post, author, reason):
    ledger = TakedownLedger(tmp_path)
    with pytest.raises(TakedownError):
        ledger.add(posts=[post] if post else [], authors=[author] if author else [], reason=reason)
    assert ledger.version == 0


def test_a_damaged_batch_is_named_with_its_line(tmp_path):
    ledger = TakedownLedger(tmp_path)
    ledger.add(posts=["a1"], reason="one")
    (tmp_path / "takedowns" / "ledger" / "000001.jsonl").write_text('{"kind": "post"}\n')
    with pytest.raises(TakedownError, match="000001.jsonl:1: missing"):
        ledger.read()
