"""The collapse step: surface words -> canonical labels, with unmapped words counted, not lost."""
from extractors.examples import build_examples
from extractors.vocabulary import EXCLUDED, NOT_IN_VOCABULARY, Collapser, label_for
from schemas.config import ExtractConfig
from schemas.funnel import Funnel
from schemas.records import RawPost
from schemas.vocabulary import default_vocabulary


def test_label_for_returns_the_canonical_label_and_keeps_unmapped_surfaces():
    assert label_for("Guilt") == label_for("guilty") == "guilty"
    assert label_for("worri") == "worried"
    assert label_for("Hospital") == "hospital"          # excluded: the surface stays, the report counts it
    assert label_for("exhausted  ") == "exhausted"      # outside the vocabulary


def test_collapser_counts_every_mask_as_mapped_or_unmapped_with_a_reason():
    c = Collapser()
    assert c.observe(["guilt", "Guilty", "hospital", "exhausted", "exhausted"]) == ["guilty", "guilty", None, None, None]
    r = c.report()
    assert (r["masks"], r["mapped"], r["unmapped"], r["labels"]) == (5, 2, 3, 1)
    assert r["by_reason"] == {EXCLUDED: 1, NOT_IN_VOCABULARY: 2}
    assert r["words"][0] == {"surface": "exhausted", "count": 2, "reason": NOT_IN_VOCABULARY, "note": ""}
    assert r["words"][1]["surface"] == "hospital" and r["words"][1]["note"]
    assert r["vocabulary_version"] == default_vocabulary().version
    assert "words" not in c.summary() and c.summary()["unmapped"] == 3


def test_extracted_examples_keep_surfaces_and_carry_canonical_labels(extractor):
    posts = [RawPost(id="a", text="I feel guilt about it. I'm so worried."),
             RawPost(id="b", text="Feeling pretty hopeless today.")]
    examples = list(build_examples(posts, extractor, ExtractConfig(), Funnel()))
    assert [e.surfaces for e in examples] == [["guilt", "worried"], ["hopeless"]]
    assert [e.labels for e in examples] == [["guilty", "worried"], ["hopeless"]]
    (d,) = [d for d in extractor.extract("I feel guilt.") if not d.negated]
    assert (d.surface, d.label) == ("guilt", "guilty")
