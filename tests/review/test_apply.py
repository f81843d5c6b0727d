"""apply_decisions: decisions find the same word in the same post again after the post was
scrubbed differently and segmented differently, and only then."""
from __future__ import annotations

import json

import pytest

from extractors.disclosures import mask_text
from extractors.examples import usable
from extractors.segmentation import Segmenter
from review.apply import REASON, ReviewIndex, apply_decisions
from review.imports import import_decisions
from review.items import release_items
from review.ledger import Entry, Ledger
from review.registry import register_items
from tests.review.helpers import POSTS, SMALL_WINDOWS, build_tiny_release, rescrubbed, scrubbed
from warehouse.releases.release import Release


def _sentence(text: str, d) -> str:
    """The sentence around a disclosure, to say which occurrence it is."""
    lo = max(text.rfind(". ", 0, d.start), text.rfind("\n", 0, d.start)) + 1
    hi = text.find(".", d.end)
    return text[lo:hi].strip()


@pytest.fixture(scope="module")
def reviewed(extractor, tmp_path_factory):
    """v1 built and exported; the 2nd 'sad' and 'angry' rejected, the 1st 'sad' and 'happy' accepted."""
    root = tmp_path_factory.mktemp("wh")
    rel = build_tiny_release(root, {k: scrubbed(v) for k, v in POSTS.items()}, extractor)
    items = release_items(rel, root).items
    register_items(root, items)
    pick = {(it.surface, it.occurrence): it for it in items if it.post_id == "p1"}
    decisions = [(pick["sad", 1], "reject"), (pick["angry", 0], "reject"),
                 (pick["sad", 0], "accept"), (pick["happy", 0], "accept")]
    path = root / "decisions.jsonl"
    path.write_text("".join(json.dumps({"item_id": it.item_id, "decision": d, "reviewer": "ana"}) + "\n"
                            for it, d in decisions))
    import_decisions(path, root)
    return root, ReviewIndex.from_ledger(Ledger(root, "tiny"))


def _masks(extractor, text: str):
    return usable(extractor.extract(text), keep_negated=False)


def test_rejections_survive_a_new_pii_scrubber_and_new_segmentation(reviewed, extractor):
    root, index = reviewed
    text = rescrubbed(POSTS["p1"])  # other placeholders: every offset after them moves
    assert text != scrubbed(POSTS["p1"])
    masks = _masks(extractor, text)
    applied = apply_decisions("p1", text, masks, index)
    assert sorted(_sentence(text, d) for d in applied.rejected) == [
        "After I hung up I feel so sad again, like the distance only hit me right then",
        "But then on Tuesday my manager moved my review forward without telling me, and I was really angry "
        "at myself for not preparing earlier"]
    assert [d.surface for d in applied.accepted] == ["sad", "happy"]
    assert "think about the friends" in _sentence(text, applied.accepted[0])
    assert [d.surface for d in applied.kept] == ["sad", "happy"]
    assert applied.reason is None
    # the next build masks the kept words only: the rejected ones stay as text
    windows = Segmenter(SMALL_WINDOWS).segments(text, applied.kept)
    assert len(windows) == 2 and all(len(w.disclosures) == 1 for w in windows)
    [whole] = Segmenter().segments(text, applied.kept)
    masked = mask_text(whole.text, whole.disclosures)
    assert "I was really angry at myself" in masked and "I feel so sad again" in masked
    assert "I feel so <mask> when I think" in masked and "I'm so <mask> we did" in masked


def test_a_new_occurrence_of_the_word_is_told_apart_by_its_context(reviewed, extractor):
    _, index = reviewed
    text = scrubbed(POSTS["p1"]).replace(
        "The first week was chaos.", "The first week was chaos and I feel so sad about the timing of it all.")
    masks = _masks(extractor, text)
    assert [d.surface for d in masks].count("sad") == 3  # counts changed: order alone cannot say which is which
    applied = apply_decisions("p1", text, masks, index)
    rejected = [_sentence(text, d) for d in applied.rejected if d.surface == "sad"]
    assert rejected == ["After I hung up I feel so sad again, like the distance only hit me right then"]
    kept_sad = [_sentence(text, d) for d in applied.kept if d.surface == "sad"]
    assert len(kept_sad) == 2 and any("timing" in s for s in kept_sad)
    assert set(applied.matched.values()) <= {w.item_id for w in index.by_post["p1"]}
    assert len(applied.matched) == 4  # the new 'sad' matched no decision


def test_a_word_that_is_gone_keeps_no_decision(reviewed, extractor):
    _, index = reviewed
    text = scrubbed(POSTS["p1"]).replace("and I was really angry at myself for not preparing earlier",
                                         "and I had to prepare everything again")
    applied = apply_decisions("p1", text, _masks(extractor, text), index)
    assert [d.surface for d in applied.rejected] == ["sad"]
    assert "angry" not in [d.surface for d in applied.kept]


def test_a_post_whose_every_mask_is_rejected_is_dropped_as_review_rejected(reviewed, extractor):
    root, _ = reviewed
    text = scrubbed(POSTS["p2"])
    masks = _masks(extractor, text)
    assert [d.surface for d in masks] == ["relieved"]
    item = next(it for it in release_items(Release.at(root / "tiny" / "v1"), root).items if it.post_id == "p2")
    entries = Ledger(root, "tiny").read()
    reject = Entry(**{**entries[0].to_json(), "item_id": item.item_id, "decision": "reject", **item.identity()})
    index = ReviewIndex.from_entries([*entries, reject])
    applied = apply_decisions("p2", text, masks, index)
    assert applied.kept == [] and [d.surface for d in applied.rejected] == ["relieved"]
    assert applied.reason == REASON == "review_rejected"


def test_posts_without_decisions_and_dict_rows_pass_through(reviewed):
    _, index = reviewed
    rows = [{"start": 0, "end": 3, "surface": "sad"}]
    applied = apply_decisions("unreviewed-post", "sad day", rows, index)
    assert applied.kept == rows and not applied.rejected and applied.reason is None


def test_index_describes_the_ledger_version_it_was_built_from(reviewed):
    root, index = reviewed
    ledger = Ledger(root, "tiny")
    assert index.describe() == {"dataset": "tiny", "ledger_version": 1, "ledger_sha256": ledger.sha256(1),
                                "reviewed_items": 4, "rejected_items": 2}

