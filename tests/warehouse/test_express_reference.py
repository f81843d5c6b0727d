"""A release beside EXPRESS's published statistics: the facts come from the versioned data file,
and a figure far from the paper's gets a note in plain words."""
from collections import Counter

from schemas.lexicon import data_versions
from warehouse.pages.express_reference import compare_with_express, published
from warehouse.releases.stats import ReleaseStats


def _stats(masks: dict[int, int], words: dict[int, int], surfaces: Counter) -> ReleaseStats:
    rows = sum(masks.values())
    return ReleaseStats({"test": rows}, Counter(surfaces), masks, words, surfaces=Counter(surfaces))


def test_the_papers_figures_come_from_the_versioned_data_file():
    ref = published()
    assert ref["version"] == data_versions()["published"]["version"]
    assert ref["masks_per_segment"]["mean"] == 1.56
    assert (ref["words_per_segment"]["mean"], ref["words_per_segment"]["min"], ref["words_per_segment"]["max"]) == (
        259, 20, 492)
    top = ref["top_labels"]
    assert list(top)[:3] == ["happy", "guilty", "scared"] and top["grateful"] == 991 and len(top) == 14
    assert ref["dataset"]["masks"] == 52632 and ref["dataset"]["segments"] == 33679


def test_figures_close_to_the_paper_say_so_and_far_ones_explain():
    # 100 segments: 1.5 masks each on average (close to 1.56); 60 words each (far below 259), 10 under 20 words
    stats = _stats({1: 50, 2: 50}, {10: 10, 66: 90}, Counter({"happy": 60, "sad": 40, "bored": 50}))
    c = compare_with_express(stats)
    fig = {f.name: f for f in c.figures}
    masks, words = fig["masks per segment"], fig["words per segment"]
    assert (masks.paper, masks.release, masks.far) == (1.56, 1.5, False) and masks.note == "close to EXPRESS (-4%)"
    assert words.far and words.release == (10 * 10 + 66 * 90) / 100
    assert words.note == "Segments here are shorter than EXPRESS's: 60 against 259 words on average (-77%)."
    span = fig["words per segment, shortest to longest"]
    assert (span.paper, span.paper_high, span.release, span.release_high) == (20, 492, 10, 66)
    assert span.note == "Of the segments here, 10 (10.0%) are shorter than EXPRESS's shortest (20 words)."
    shares = {x.label: x for x in c.labels}
    # happy: 60 of 150 masks = 40% against 2,999 / 52,632 = 5.7%
    assert shares["happy"].count == 60 and abs(shares["happy"].share - 0.4) < 1e-12
    assert shares["happy"].note == "“happy” is 7.0 times as frequent here as in EXPRESS (40.0% of masks against 5.7%)."
    assert shares["guilty"].note == "“guilty” never occurs here (EXPRESS: 5.3% of masks)."
    top = fig["share of masks whose word is one of the paper's 14 most frequent"]
    assert abs(top.release - 100 / 150) < 1e-12 and top.far  # 1.5 times, but 23 points apart
    assert top.note == ("The paper's 14 most frequent words are more frequent here than in EXPRESS "
                        "(66.7% of masks against 43.8%).")
    assert abs(top.paper - 23067 / 52632) < 1e-12  # 2,999 + 2,778 + ... + 991


def test_a_release_like_express_gets_no_far_notes():
    ref = published()
    surfaces = Counter({w: n for w, n in ref["top_labels"].items()})
    surfaces["other"] = ref["dataset"]["masks"] - sum(surfaces.values())
    stats = _stats({1: 44, 2: 56}, {20: 1, 259: 98, 492: 1}, surfaces)  # 1.56 masks, 259 words, 20..492
    c = compare_with_express(stats)
    assert not [f for f in c.figures if f.far] and not [x for x in c.labels if x.note]
    assert {f.name: f.note for f in c.figures}["words per segment, shortest to longest"] == (
        "every segment is within EXPRESS's range")
