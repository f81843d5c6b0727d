"""Review items: one per mask, with an identity that a new scrubber or segmentation keeps."""
from __future__ import annotations

import json
from collections import Counter

import duckdb
import pytest

from review.items import mask_spans, release_items, select_items
from tests.review.helpers import POSTS, SMALL_WINDOWS, build_tiny_release, rescrubbed, scrubbed


def test_mask_spans_line_up_with_the_text_and_refuse_a_mismatch():
    text = "I feel sad today and I was happy yesterday."
    masked = "I feel <mask> today and I was <mask> yesterday."
    assert mask_spans(text, masked, ["sad", "happy"]) == [(7, 10), (27, 32)]
    with pytest.raises(ValueError, match="does not line up"):
        mask_spans(text, masked, ["sad", "glad"])
    with pytest.raises(ValueError, match="missing"):
        mask_spans(text, masked, ["sad", "happy", "calm"])


def test_demo_release_gives_one_item_per_mask_with_rule_and_negation(demo_copy):
    root, rel = demo_copy
    got = release_items(rel, root)
    manifest = rel.manifest()
    assert got.masks == sum(manifest["masks"].values()) == len(got.items)  # short posts: one segment each
    assert got.unaligned == 0 and got.post_level
    assert len({it.item_id for it in got.items}) == len(got.items)
    for it in got.items:
        assert it.text[it.start:it.end] == it.surface
        assert it.rule.startswith(it.pattern + ":") and it.negated is False
        assert 0 <= it.occurrence < it.occurrences
    # repeated words in a post get occurrences 0, 1, ... in text order
    by_word = Counter((it.post_id, it.surface.lower()) for it in got.items)
    post, word = next(k for k, n in by_word.items() if n > 1)
    same = sorted((it for it in got.items if it.post_id == post and it.surface.lower() == word), key=lambda i: i.start)
    assert [it.occurrence for it in same] == list(range(len(same)))
    # the same items again when the run's disclosures are gone (rule unknown, identity unchanged)
    run = root / "runs" / manifest["run_id"] / "disclosures.parquet"
    run.unlink()
    again = release_items(rel, root)
    assert not again.post_level and {it.item_id for it in again.items} == {it.item_id for it in got.items}
    assert all(it.rule == "" and it.negated is None for it in again.items)


def test_item_ids_survive_a_new_scrubber_and_overlapping_windows(extractor, tmp_path):
    v1 = build_tiny_release(tmp_path, {k: scrubbed(v) for k, v in POSTS.items()}, extractor)
    v2 = build_tiny_release(tmp_path, {k: rescrubbed(v) for k, v in POSTS.items()}, extractor, SMALL_WINDOWS,
                            version="v2", run_id="run-2")
    a, b = release_items(v1, tmp_path), release_items(v2, tmp_path)
    rows = duckdb.sql(f"SELECT segment_index, surfaces FROM '{v2.path}/data/*.parquet' WHERE post_id = 'p1' "
                      "ORDER BY segment_index").fetchall()
    assert len(rows) >= 3 and b.masks > len(b.items)  # windows overlap: some masks are shown twice
    assert {it.item_id for it in a.items} == {it.item_id for it in b.items}
    assert len(b.items) == len(a.items) == 5
    sad = sorted((it for it in b.items if it.surface == "sad"), key=lambda it: it.occurrence)
    assert [(it.occurrence, it.occurrences) for it in sad] == [(0, 2), (1, 2)]
    assert sad[1].right[:3] == ["again", "like", "the"]
    assert "jenny" not in sad[0].left + sad[0].right  # placeholders and names differ, context words not


def test_sample_is_reproducible_and_spread_over_strata(demo_copy):
    root, rel = demo_copy
    items = release_items(rel, root).items
    a = select_items(items, 40, seed=7, stratify="pattern")
    assert [it.item_id for it in a] == [it.item_id for it in select_items(items, 40, seed=7, stratify="pattern")]
    assert [it.item_id for it in a] != [it.item_id for it in select_items(items, 40, seed=8, stratify="pattern")]
    assert len(a) == 40
    sizes = Counter(it.pattern for it in items)
    got = Counter(it.pattern for it in a)
    assert set(got) == set(sizes)  # every pattern is represented
    for pattern, n in sizes.items():  # in proportion to its size (largest remainder)
        assert abs(got[pattern] - 40 * n / len(items)) < 1.5
    labels = Counter(it.label for it in select_items(items, 10, seed=1, stratify="label"))
    assert sum(labels.values()) == 10 and max(labels.values()) <= 2
    assert len(select_items(items, None)) == len(items)


def test_cli_export_writes_jsonl_items_and_label_studio_tasks(demo_copy, tmp_path, capsys):
    from flows.cli import main

    root, rel = demo_copy
    out = tmp_path / "items.jsonl"
    assert main(["review", "export", "--release", f"{rel.dataset}/{rel.version}", "--warehouse", str(root),
                 "--out", str(out), "--sample", "25", "--seed", "3", "--stratify", "rule"]) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == 25 and "25 items of" in capsys.readouterr().out
    for row in lines:
        assert row["text"][row["start"]:row["end"]] == row["surface"]
        assert {"item_id", "post_id", "pattern", "rule", "label", "negated"} <= set(row)
    registry = (root / "reviews" / rel.dataset / "items.jsonl").read_text().splitlines()
    assert {json.loads(x)["item_id"] for x in registry} == {r["item_id"] for r in lines}
    assert main(["review", "export", "--release", "nope/v9", "--warehouse", str(root), "--out", str(out)]) == 2
    assert "no release 'nope/v9'" in capsys.readouterr().err
