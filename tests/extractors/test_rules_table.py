"""A hand-written table of sentences: each pattern family and masking rule, with cases that
must and must not produce a disclosure, the faults of the authors' script, and negation.
The rules alone: the acceptance model after them has tests of its own (test_acceptance.py)."""
import pytest

from extractors.disclosures import DisclosureExtractor, mask_text
from extractors.reference import EXTENDED_TAG


@pytest.fixture(scope="module")
def extractor(rules_extractor):
    """The pattern rules without the acceptance model, which would drop e.g. "Ok. Still feeling
    anxious." as the EXPRESS gold (the authors' script lost family 3 after the first sentence)."""
    return rules_extractor


@pytest.fixture(scope="module")
def extended_extractor(rules_extractor):
    return DisclosureExtractor(nlp=rules_extractor.nlp, forms="extended", acceptance="off")

# (text, expected [(surface, pattern, negated)], what the case proves)
TABLE = [
    # family 1: I + up to 3 words + feel/felt/feeling + a phrase of up to 4 words
    ("I feel so guilty about it.", [("guilty", "family1", False)], "f1 basic with intensifier"),
    ("I felt sad.", [("sad", "family1", False)], "f1 felt"),
    ("I have felt extremely angry since then.", [("angry", "family1", False)], "f1 have felt"),
    ("I had felt lonely for years.", [("lonely", "family1", False)], "f1 had felt"),
    ("I am feeling anxious today.", [("anxious", "family1", False)], "f1 am feeling"),
    ("I was feeling hopeless.", [("hopeless", "family1", False)], "f1 was feeling"),
    ("I’m so overwhelmed.", [("overwhelmed", "family2", False)], "f2 curly apostrophe is typography"),
    ("Im lonely tonight.", [("lonely", "family2", False)], "f2 Im without apostrophe"),
    ("i just feel really tired", [("tired", "family1", False)], "f1 lower-case i, no period"),
    ("I kind of feel a bit nervous.", [("nervous", "family1", False)], "f1 hedges before and after verb"),
    ("I feel kind of embarrassed about it.", [("embarrassed", "family1", False)], "f1 'kind of' is a hedge"),
    ("I began to feel a deep rage.", [("rage", "family1", False)], "f1 words between I and feel"),
    ("I cant help but feel overwhelmed.", [("overwhelmed", "family1", False)], "f1 three words between"),
    ("I feel self-conscious around them.", [("self-conscious", "family1", False)], "f1 hyphenated lexicon item"),
    ("I feel mixed up about it.", [("mixed up", "family1", False)], "f1 two-word lexicon item"),
    ("I feel really scared 😢 now.", [("scared", "family1", False)], "f1 emoji after the word"),
    ("I feel angry and sad.", [("angry", "family1", False)], "f1 one word per phrase"),
    ("I feel lonely. I feel afraid.", [("lonely", "family1", False), ("afraid", "family1", False)],
     "f1 one word per phrase, two phrases"),
    ("I feel like he is sad.", [], "f1 phrase starting with like"),
    ("I feel like a failure.", [], "f1 like"),
    ("I feel he was sad.", [], "f1 pronoun before the word"),
    ("I feel that it is sad.", [], "f1 determiner-pronoun before the word"),
    ("I feel the need to be happy.", [], "f1 verb before the word"),
    ("I felt John was angry.", [], "f1 proper noun before the word"),
    ("I feel how happy he is.", [], "f1 question word before the word"),
    ("I think she felt sad.", [("sad", "family1", False)],
     "f1 any three words between I and felt, as EXPRESS: someone else's feeling is the model's to weigh"),
    ("I remember one night feeling really overwhelmed.", [("overwhelmed", "family1", False)],
     "f1 a noun between I and feeling"),
    ("My sister is happy about her new job.", [], "no trigger at all"),
    ("I went to the store and felt nothing.", [], "f1 more than 3 words between I and felt"),
    ("I feel it would be very nice to be happy.", [], "f1 word beyond the 4-word phrase"),
    ("I feel a bit like this.", [], "f1 like as a preposition is no emotion word"),
    ("I feel lonely, and sad.", [("lonely", "family1", False)], "f1 a word before a comma in its phrase"),
    # family 2: I'm / Im / I am / I was / I have been / I had been + adjective
    ("I'm scared of the dark.", [("scared", "family2", False)], "f2 I'm"),
    ("I’m so happy for you.", [("happy", "family2", False)], "f2 curly I’m"),
    ("Im really tired.", [("tired", "family2", False)], "f2 Im"),
    ("i am anxious", [("anxious", "family2", False)], "f2 lower-case i am"),
    ("I was angry at him.", [("angry", "family2", False)], "f2 I was"),
    ("I have been lonely lately.", [("lonely", "family2", False)], "f2 I have been"),
    ("I had been nervous all week.", [("nervous", "family2", False)], "f2 I had been"),
    ("I have been so lonely.", [("lonely", "family2", False)], "f2 I have been with intensifier"),
    ("I am a little jealous.", [("jealous", "family2", False)], "f2 'a little' hedge"),
    ("I am a bit jealous.", [], "f2 noun before the word: its head is be, not feel"),
    ("I was a lot happier then.", [], "f2 noun 'lot' before the word"),
    ("I was in tears, furious.", [], "f2 noun 'tears' before the word"),
    ("I feel a bit jealous.", [("jealous", "family1", False)], "f1 noun before is fine: head is feel"),
    ("I’m really self-conscious about it.", [("self-conscious", "family2", False)], "f2 hyphenated item"),
    ("I AM SO ANGRY right now.", [("ANGRY", "family2", False)], "f2 all caps"),
    ("I\u00a0am\u00a0happy.", [("happy", "family2", False)], "f2 no-break spaces"),
    ("I\tam sad.", [("sad", "family2", False)], "f2 tab"),
    ("I\u200b feel sad.", [("sad", "family1", False)], "f1 zero-width space after I"),
    ("I'm going to the store after work.", [], "f2 verb, no lexicon word"),
    ("I was at home alone.", [], "f2 lexicon word beyond 3 words"),
    ("I am feeling the fear.", [("fear", "family1", False)], "f2 stops at feeling; family 1 owns it"),
    ("I was so feeling it.", [], "f2 stops at feeling"),
    ("I'm like happy or whatever.", [], "f2 phrase starting with like"),
    ("I was told she is happy.", [], "f2 verb before the word"),
    ("I'm what you would call happy.", [], "f2 question word before the word"),
    ("I was his comfort.", [], "f2 pronoun before the word"),
    ("I'm in love with her.", [], "f2 noun is not an adjective"),
    ("I was surprised by his answer.", [("surprised", "family2", False)], "f2 a participle read as an adjective"),
    ("I am overwhelmed by all your kind words.", [("overwhelmed", "family2", False)], "f2 passive frame"),
    ("I'm reall nervous about it.", [("nervous", "family2", False)], "f2 a misspelt intensifier is no verb"),
    ("Im sooo tired of it.", [("tired", "family2", False)], "f2 a stretched intensifier"),
    ("I am fucking angry.", [("angry", "family2", False)], "f2 a swear word as intensifier is no verb"),
    ("I was told she is happy.", [], "f2 a verb that is no intensifier still blocks"),
    # family 3: "feeling" with no noun, proper noun or pronoun before it in the sentence
    ("Feeling pretty hopeless today.", [("hopeless", "family3", False)], "f3 basic"),
    ("Just feeling sad.", [("sad", "family3", False)], "f3 adverb before feeling"),
    ("Feeling sad was a trigger for me.", [("sad", "family3", False)], "f3 nominal use of the phrase"),
    ("The feeling of sadness is strong.", [], "f3 noun before feeling"),
    ("My dog keeps feeling sad.", [], "f3 pronoun/noun before feeling"),
    ("Not feeling happy today.", [("happy", "family3", True)], "f3 negated"),
    # negation: found, marked negated
    ("I'm not happy with how it went.", [("happy", "family2", True)], "neg I'm not"),
    ("I do not feel guilty.", [("guilty", "family1", True)], "neg do not feel"),
    ("I dont feel guilty.", [("guilty", "family1", True)], "neg dont without apostrophe"),
    ("I never felt happy there.", [("happy", "family1", True)], "neg never felt"),
    ("I felt no joy.", [("joy", "family1", True)], "neg no before the word"),
    ("I am no longer afraid.", [("afraid", "family2", True)], "neg no longer"),
    ("I was never really upset.", [("upset", "family2", True)], "neg never really"),
    ("I did not even feel sad.", [("sad", "family1", True)], "neg did not even"),
    ("I'm not sure what to do.", [], "neg 'sure' is not an emotion word"),
]


# Forms the reference patterns never label (I'm feeling, I've been, don't feel, markdown inside
# the trigger): with forms="reference" (the default) they give nothing; with "extended" they are
# found, at exact offsets, and their rule says so.
EXTENDED_TABLE = [
    ("I’m feeling overwhelmed.", [("overwhelmed", "family1", False)], "f1 curly apostrophe"),
    ("Im feeling lonely tonight.", [("lonely", "family1", False)], "f1 Im without apostrophe"),
    ("I can't help but feel overwhelmed.", [("overwhelmed", "family1", False)], "f1 three words between"),
    ("I feel **really** scared 😢 now.", [("scared", "family1", False)], "f1 markdown and emoji"),
    ("I've been so lonely.", [("lonely", "family2", False)], "f2 I've been"),
    ("I don't feel guilty.", [("guilty", "family1", True)], "neg don't feel"),
    ("I didn’t even feel sad.", [("sad", "family1", True)], "neg curly didn’t"),
    # what the authors' script lost to its offset faults never carries an EXPRESS label; the rules
    # find it at exact offsets all the same (EXPRESS's patterns, not its faults)
    ("I feel so, so lonely.", [("lonely", "family1", False)], "f1 a word after a comma in its phrase"),
    ("I am extremely, extremely grateful.", [("grateful", "family2", False)], "f2 a word after a comma"),
    ("Ok. Still feeling anxious.", [("anxious", "family3", False)], "f3 second sentence: offset added once"),
    ("Long day at work. Feeling so tired!", [("tired", "family3", False)], "f3 offset in later sentence"),
]


@pytest.mark.parametrize("text, expected, why", TABLE, ids=[row[2] for row in TABLE])
def test_rule_table(extractor, text, expected, why):
    found = extractor.extract(text)
    assert [(d.surface, d.pattern, d.negated) for d in found] == expected, why
    for d in found:
        assert text[d.start:d.end] == d.surface  # exact offsets whatever the text holds
        assert d.rule.startswith(d.pattern + ":")


@pytest.mark.parametrize("text, expected, why", EXTENDED_TABLE, ids=[row[2] for row in EXTENDED_TABLE])
def test_extended_forms_only_when_asked(extractor, extended_extractor, text, expected, why):
    assert extractor.extract(text) == [], why
    found = extended_extractor.extract(text)
    assert [(d.surface, d.pattern, d.negated) for d in found] == expected, why
    for d in found:
        assert text[d.start:d.end] == d.surface
        assert d.rule.startswith(d.pattern + ":") and d.rule.endswith(EXTENDED_TAG)


def test_table_is_large_enough():
    assert len(TABLE) >= 60
    assert sum(1 for _, exp, _ in TABLE if not exp) >= 20


def test_offsets_survive_rejoined_phrases_and_odd_spacing(extended_extractor):
    """The authors re-joined phrase tokens with single spaces, so offsets drifted after
    double spaces, tabs or punctuation (and such finds carry no EXPRESS label: extended forms);
    ours are token offsets in the original text."""
    text = "Well...  I   feel\tso ,  very   guilty !!  And   I'm    sad."
    found = extended_extractor.extract(text)
    assert [text[d.start:d.end] for d in found] == ["guilty", "sad"]
    assert mask_text(text, found) == "Well...  I   feel\tso ,  very   <mask> !!  And   I'm    <mask>."


def test_family3_offset_is_not_added_twice(extended_extractor):
    """The authors added the sentence offset twice for family 3; a long prefix would push
    the span far off. Here the disclosure sits behind 2,000 characters of other sentences
    (so it is an extended form: EXPRESS never labelled family 3 after the first sentence)."""
    prefix = "We walked the dog in the park. " * 65
    text = prefix + "Feeling really lonely tonight."
    (d,) = extended_extractor.extract(text)
    assert (d.pattern, text[d.start:d.end]) == ("family3", "lonely")
    assert d.start == len(prefix) + len("Feeling really ")


def test_very_long_post_with_non_ascii(extractor):
    filler = "Ça va, naïve café ümlaut 日本語 text here. " * 900  # about 40,000 characters
    text = filler + "I’m so anxious 😰 about it." + filler
    assert len(text) > 40_000
    (d,) = extractor.extract(text)
    assert text[d.start:d.end] == "anxious" and not d.negated


@pytest.mark.parametrize("text, surface, reason", [
    ("I feel he was sad.", "sad", "after_pronoun"),
    ("I felt John was angry.", "angry", "after_verb_or_name"),
    ("I feel lost and was happy.", "happy", "after_verb_or_name"),
    ("I feel how happy he is.", "happy", "after_question_word"),
    ("I'm in love with her.", "love", "not_adjective"),
    ("I'm a bit nervous.", "nervous", "after_noun"),
])
def test_explain_names_the_rule_that_kept_a_word_unmasked(extractor, text, surface, reason):
    assert extractor.extract(text) == []
    (d,) = extractor.explain(text)
    assert d.surface == surface and d.rule.endswith(":blocked_" + reason)


def test_reference_phrase_uses_up_a_second_trigger(extractor, extended_extractor):
    """The reference regexes run without overlap: in "I feel lonely and I feel afraid" the first
    phrase ("lonely and I feel") swallows the second trigger, so EXPRESS labels only "lonely"."""
    text = "I feel lonely and I feel afraid."
    assert [d.surface for d in extractor.extract(text)] == ["lonely"]
    found = extended_extractor.extract(text)
    assert [d.surface for d in found] == ["lonely", "afraid"]
    assert not found[0].rule.endswith(EXTENDED_TAG) and found[1].rule.endswith(EXTENDED_TAG)
    # a sentence end closes the reference phrase, so both triggers count
    assert [d.surface for d in extractor.extract("I feel lonely. I feel afraid.")] == ["lonely", "afraid"]


def test_markdown_inside_a_trigger_is_an_extended_form(extractor, extended_extractor):
    text = "I *still* feel afraid, but I am **so** happy."
    assert extractor.extract(text) == []
    assert [d.surface for d in extended_extractor.extract(text)] == ["afraid", "happy"]


def test_intensifiers_match_their_misspellings_but_not_other_short_words():
    from extractors.patterns import default_intensifiers

    words = default_intensifiers()
    assert all(w in words for w in ("really", "Reall", "realy", "sooo", "extremly", "rlly", "verry", "fuckin"))
    assert not any(w in words for w in ("kind", "sort", "real", "ready", "sure", "told", "seems"))
