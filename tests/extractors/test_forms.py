"""The trigger-forms switch: reference (EXPRESS's forms, the default) or extended, everywhere it is set."""
import json

import pytest

from extractors.disclosures import DisclosureExtractor
from extractors.jsonl import extract_jsonl
from extractors.reference import EXTENDED_TAG, ReferenceReach
from schemas.config import ConfigError, recipe_from_dict

TEXT = "I'm feeling so lonely. I am scared."


def test_unknown_forms_are_rejected_by_extractor_and_recipe():
    with pytest.raises(ValueError, match="forms"):
        DisclosureExtractor(forms="everything")
    with pytest.raises(ConfigError, match="forms"):
        recipe_from_dict({"extract": {"forms": "everything"}})
    assert recipe_from_dict({}).extract.forms == "reference"


def test_extract_jsonl_passes_forms(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": 1, "text": TEXT}) + "\n", encoding="utf-8")
    rules = {}
    for forms in ("reference", "extended"):
        out = tmp_path / f"{forms}.jsonl"
        assert extract_jsonl(src, out, forms=forms) == 1
        row = json.loads(out.read_text(encoding="utf-8"))
        rules[forms] = [(d["surface"], d["rule"].endswith(EXTENDED_TAG)) for d in row["disclosures"]]
    assert rules["reference"] == [("scared", False)]
    assert rules["extended"] == [("lonely", True), ("scared", False)]


@pytest.mark.parametrize("text, word, reached", [
    ("I feel sad", "sad", True),
    ("I’m sad", "sad", True),                     # curly apostrophe is typography
    ("I\u00a0was sad", "sad", True),              # so is a no-break space
    ("I'm feeling sad", "sad", False),            # the reference regexes never see it
    ("I've been sad", "sad", False),
    ("I don't feel sad", "sad", False),           # an apostrophe ends the \\w+ gap words
    ("I feel sad, so so", "sad", True),           # a comma may stand between phrase words
    ("I feel so, so sad", "sad", False),          # but a word after it lost its offset (the script's fault)
    ("I am still  sad", "sad", False),            # so did a word after a run of spaces
    ("I am\u00a0still sad", "sad", True),         # a no-break space is typography
    ("I feel - sad", "sad", False),               # other punctuation ends the phrase
    ("I feel that we were very sad", "sad", False),  # beyond the 4-word phrase
])
def test_reference_reach_follows_the_reference_patterns(text, word, reached):
    reach = ReferenceReach(text)
    start = text.rindex(word)
    assert (reach.reaches("family1", start) or reach.reaches("family2", start)) == reached
    assert reach.reaches("family3", start)  # family 3 is judged on tags (in the first sentence)


@pytest.mark.parametrize("text, reached", [
    ("Feeling so sad today.", True),
    ("Feeling so sad today. Then more.", True),
    ("Long day. Feeling so sad today.", False),     # the script added the first sentence's offset twice
    ("Long day\nFeeling so sad today.", False),     # a line break ends a sentence too
    ("Long day...feeling so sad today.", True),     # no space after the dots: still the first sentence
])
def test_family3_is_reached_in_the_first_sentence_only(text, reached):
    assert ReferenceReach(text).reaches("family3", text.rindex("sad")) == reached


def test_ascii_texts_reach_the_same_phrases_as_the_case_insensitive_reference_patterns():
    """ASCII text is lowercased and scanned by the stdlib patterns; the phrase spans must be those
    of the IGNORECASE reference regexes, whatever the case, spacing, commas and control characters."""
    import random

    from extractors import reference

    def defining(text):
        flat = text.translate(reference._TYPOGRAPHY)
        return {"family1": reference._spans(reference.FAMILY1, flat), "family2": reference._spans(reference.FAMILY2, flat)}

    words = ["I", "i", "I'm", "IM", "Im", "I am", "I  WAS", "I have been", "I had been", "feel", "FELT", "feeling",
             "Feeling", "am feeling", "had felt", "have felt", "so", "sad", ",", " ,", "\n", "\t", "\x1c", "’", "x_i",
             "2i", "io", "i-", "Happy", "lonely and"]
    rng = random.Random(6)
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 20))) for _ in range(8000)]
    reached = 0
    for text in texts:
        assert text.translate(reference._TYPOGRAPHY).isascii()
        got = ReferenceReach(text)._spans
        assert got == defining(text), repr(text)
        reached += len(got["family1"][0]) + len(got["family2"][0])
    assert reached > 3000
