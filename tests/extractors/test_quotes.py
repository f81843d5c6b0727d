"""The quote-lines switch: finds in `>` quote lines masked like any other ("mask", the default) or
left in the text ("skip"), in the extractor, its explain, the recipe and the build's extract step."""
import pytest

from extractors.disclosures import DisclosureExtractor
from extractors.quotes import QUOTED, QuoteLines
from schemas.config import ConfigError, recipe_from_dict

TEXT = ("> I feel so lonely these days, she wrote to me.\n\n"
        "   >I'm scared of what comes next, she added.\n\n"
        "Reading it now I feel guilty that I never answered. The > sign was hers, and I am sad.")


def test_quote_lines_are_lines_starting_with_a_quote_mark_after_up_to_three_spaces():
    lines = QuoteLines(TEXT + "\n    > four spaces is code, not a quote")
    assert lines.holds(TEXT.index("lonely")) and lines.holds(TEXT.index("scared"))
    assert not lines.holds(TEXT.index("guilty")) and not lines.holds(TEXT.index("sad"))
    assert not lines.holds(len(TEXT) + 8)
    assert not QuoteLines("I feel sad.").holds(3)


def test_finds_in_quote_lines_are_masked_by_default_and_left_in_the_text_with_skip(rules_extractor):
    masked = [d.surface for d in rules_extractor.extract(TEXT)]
    skip = DisclosureExtractor(nlp=rules_extractor.nlp, acceptance="off", quote_lines="skip")
    assert masked == ["lonely", "scared", "guilty", "sad"]
    assert [d.surface for d in skip.extract(TEXT)] == ["guilty", "sad"]
    listed = {d.surface: d.rule for d in skip.explain(TEXT)}
    assert listed["lonely"].endswith(f":{QUOTED}") and not listed["guilty"].endswith(f":{QUOTED}")
    with pytest.raises(ValueError, match="quote_lines"):
        DisclosureExtractor(nlp=rules_extractor.nlp, quote_lines="drop")


def test_quote_lines_is_a_validated_recipe_switch_the_extract_step_follows():
    from pipeline.extract_shards import ExtractStep

    assert recipe_from_dict({}).extract.quote_lines == "mask"
    with pytest.raises(ConfigError, match=r"\[extract\]: quote_lines must be 'mask' or 'skip'"):
        recipe_from_dict({"extract": {"quote_lines": "drop"}})
    step = ExtractStep()
    step.setup(recipe_from_dict({"extract": {"quote_lines": "skip", "acceptance": "off"}}))
    assert step.extractor.quote_lines == "skip"
