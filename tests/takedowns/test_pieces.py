"""The small parts a takedown rests on: the publisher's refusal of a release holding a taken-down
post, the journal that makes a folder's rewrite all or nothing, the text fingerprints, how ids are
matched, and the weekly switch."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from common.files import JOURNAL, commit_together, finish_commits, staged
from common.parquet import ParquetSink
from schemas.config import GateConfig, Recipe, load_recipe
from schemas.records import EXAMPLES, Example
from common.matching.fingerprints import MIN_WORDS, TextFinder, fingerprint
from common.matching.takedowns import TakedownMatcher
from takedowns.files import file_hits
from warehouse.layout import Warehouse
from warehouse.releases.publish import Checks, GateFailed, publish_release

TEXT = ("Honestly I have been so tired since the move and my sister keeps calling about the rent "
        "every single evening, I feel so guilty about it.")


def test_the_publisher_refuses_a_release_holding_a_taken_down_post_even_without_the_gate(tmp_path):
    wh = Warehouse.at(tmp_path / "wh")
    with ParquetSink(tmp_path / "ex.parquet", EXAMPLES) as sink:
        for i in range(5):
            sink.write(Example(f"p{i}", 0, "sub", 0, "I feel sad", "I feel <mask>", ["sad"], ["sad"], ["f1"]).to_row())
    recipe = replace(Recipe(), gate=GateConfig(enabled=False))
    with pytest.raises(GateFailed, match="1 rows hold 1 taken-down posts"):
        publish_release(tmp_path / "ex.parquet", wh, recipe, {}, checks=Checks(taken_down={"p3"}))
    assert wh.versions("express") == [] and not list(wh.dataset_dir("express").glob(".tmp-*"))
    assert publish_release(tmp_path / "ex.parquet", wh, recipe, {}, checks=Checks(taken_down={"p9"})).version == "v1"


def test_a_change_of_several_files_interrupted_half_way_is_finished_later(tmp_path):
    a, b, gone = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "gone.txt"
    for p, text in ((a, "old a"), (b, "old b"), (gone, "old")):
        p.write_text(text)
    staged(a).write_text("new a")
    staged(b).write_text("new b")
    changes = {a: staged(a), b: staged(b), gone: None}
    (tmp_path / JOURNAL).write_text(json.dumps([[str(f), str(t) if t else None] for f, t in changes.items()]))
    staged(a).replace(a)  # the crash came after the first rename
    assert finish_commits(tmp_path) == 1
    assert (a.read_text(), b.read_text(), gone.exists(), (tmp_path / JOURNAL).exists()) == ("new a", "new b", False, False)
    staged(b).write_text("newer b")
    commit_together(tmp_path, {b: staged(b)})
    assert b.read_text() == "newer b" and not staged(b).exists() and finish_commits(tmp_path) == 0


def test_a_text_is_found_again_however_it_is_written_and_only_it():
    key = b"k" * 32
    finder = TextFinder(key, [("p1", fingerprint(key, TEXT))])
    for written in (TEXT, json.dumps({"quote": f"He wrote: {TEXT}"}), TEXT.replace(" ", "\n  "),
                    TEXT.upper()):
        assert finder.posts_in(written) == {"p1"}, written
    assert finder.posts_in(TEXT.replace("sister", "brother")) == set()
    assert finder.posts_in(TEXT[: len(TEXT) // 2]) == set()  # a part is not the text
    assert fingerprint(key, " ".join(["word"] * (MIN_WORDS - 1))) is None  # too short to tell apart


def test_an_id_is_a_hit_as_a_whole_value_but_not_where_another_post_points_at_it(tmp_path):
    finder = TakedownMatcher(frozenset({"abc12"}))
    hit, miss = tmp_path / "hit.jsonl", tmp_path / "miss.jsonl"
    hit.write_text(json.dumps({"post_id": "t3_ABC12"}) + "\n")
    miss.write_text(json.dumps({"id": "zz9", "link_id": "t3_abc12", "body": "abc123 is not it"}) + "\n")
    assert file_hits(hit, finder) == "line 1" and file_hits(miss, finder) is None


def test_the_switch_is_off_by_default_and_recorded_only_when_on(tmp_path):
    assert Recipe().orchestrate.sync_takedowns is False
    assert "sync_takedowns" not in Recipe().to_dict()["orchestrate"]
    recipe = tmp_path / "r.toml"
    recipe.write_text("[orchestrate]\nsync_takedowns = true\n")
    assert load_recipe(recipe).to_dict()["orchestrate"]["sync_takedowns"] is True


def test_apply_waits_for_no_rebuild_it_would_race(tmp_path):
    from common.locking import LockTimeout, file_lock
    from takedowns.apply import apply_takedowns

    wh = Warehouse.at(tmp_path / "wh")
    with ParquetSink(tmp_path / "ex.parquet", EXAMPLES) as sink:
        sink.write(Example("p1", 0, "sub", 0, "I feel sad", "I feel <mask>", ["sad"], ["sad"], ["f1"]).to_row())
    publish_release(tmp_path / "ex.parquet", wh, replace(Recipe(), gate=GateConfig(enabled=False)), {})
    with file_lock(wh.rebuild_lock("express")), pytest.raises(LockTimeout, match="a rebuild of express"):
        apply_takedowns(wh, publish=lambda parent, taken: pytest.fail("nothing may be published"))


def test_an_empty_table_of_a_shard_is_rewritten_without_error(tmp_path):
    """A sharded build's last shard can hold an empty quarantine: the masks stay boolean (#61, case 6)."""
    from takedowns.shards import convert_quarantine
    from schemas.records import QUARANTINE

    key = b"k" * 32
    path = tmp_path / "quarantine-extract.parquet"
    import pyarrow.parquet as pq

    pq.write_table(QUARANTINE.empty_table(), path)
    matcher = TakedownMatcher(frozenset({"abc12"}), frozenset(), (("abc12", fingerprint(key, TEXT)),), key)
    assert convert_quarantine(path, matcher) == (None, {})
    assert file_hits(path, matcher) is None


def test_a_records_title_and_body_are_found_alone_and_together_and_a_crosspost_carries_its_original():
    key = b"k" * 32
    title, body = "A long night at the station with my sister", TEXT
    prints = [("p1", fp) for t in (body, f"{title}\n\n{body}") if (fp := fingerprint(key, t))]
    matcher = TakedownMatcher(frozenset({"p1"}), frozenset(), tuple(prints), key)
    assert matcher.record_hit({"id": "zz9", "title": "other", "selftext": body})
    assert matcher.in_json({"id": "zz9", "title": title, "selftext": body.replace("guilty", "guilty&amp;")})
    embedded = {"id": "zz8", "title": "x", "selftext": "", "crosspost_parent_list": [{"id": "qq1", "selftext": body}]}
    assert matcher.line_hit(json.dumps(embedded).encode())
    assert not matcher.line_hit(json.dumps({"id": "zz7", "title": title, "selftext": "nothing like it"}).encode())
    headless = TakedownMatcher(frozenset(), frozenset(), (("p1", fingerprint(key, body)[:3]),), key)
    assert headless.text_hit(f"quoted: {body.upper()}")  # a fingerprint made before heads is still found


def test_an_id_too_long_for_reddit_is_refused_and_shown_short(tmp_path):
    from warehouse.ledgers.takedowns import TakedownError, TakedownLedger

    with pytest.raises(TakedownError, match=r"\(5,000 characters\)") as exc:
        TakedownLedger(tmp_path).add(posts=["a" * 5000], reason="x")
    assert len(str(exc.value)) < 200 and TakedownLedger(tmp_path).version == 0
