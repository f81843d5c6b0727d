"""spaCy sees less (#17): today's tagging windows against those before #17 (bench/extract.py's
`PreviousWindows`), on posts built from our own sentences and, when ../shared exists, on dev.

A feel/felt/feeling with no word that may hold "I" among the 5 words before it opens no window
unless family 3 can use it; the windows that stay are the same, so every disclosure (with its
acceptance probability) must be the same.
"""
import json
import random

import pytest

from bench.extract import PreviousWindows, synthetic_posts
from extractors.disclosures import DisclosureExtractor

SENTENCES = [
    "I really do feel so anxious about tomorrow.",
    "It makes me feel sad when he leaves for work.",
    "You feel happy, they felt tired, and we all feel lonely sometimes.",
    "Honestly, after all this time I have never felt so loved and heard.",
    "Feeling pretty hopeless after the whole day at the office.",
    "After work yesterday feeling pretty hopeless, so I went home.",
    "I'm not scared of him anymore.",
    "Im so tired of everything going wrong.",
    "I’ve been so stressed out lately with the move.",
    "My sister and I felt self-conscious at the party.",
    "I (25F) feel heartbroken about the breakup.",
    "She said I was being dramatic, but I feel hurt.",
    "I think she felt angry about the whole thing.",
    "I was at the store and I felt kind of embarrassed.",
    "I can't help but feel guilty about it.",
    "The feeling of dread is back again.",
    "When I felt happy, I was so relieved and grateful.",
    "Ive felt numb for weeks and I am worried.",
    "Whenever my dad calls I somehow feel nervous and small.",
    "He made everyone feel welcome, and I felt proud of him.",
    "I was happy. I am sad now, and I feel lost.",
    "Feeling so grateful for my friends; they feel like family.",
]
FILLER = [
    "We moved to a new apartment in the spring and the commute is long.",
    "My brother works at a garage downtown and fixes old trucks on weekends.",
    "The landlord finally repaired the heating after three weeks of emails.",
    "Our dog likes to sleep on the couch when nobody is looking.",
    "Last month we drove up the coast to visit my grandparents.",
    "The meeting ran over by an hour because the projector broke.",
]


def _posts(n: int = 60, seed: int = 5) -> list[str]:
    """Posts of realistic length (about 100-250 words): filler with 1-4 of our sentences inside."""
    rng = random.Random(seed)
    posts = []
    for _ in range(n):
        parts = [rng.choice(FILLER) for _ in range(rng.randint(8, 18))]
        for s in rng.sample(SENTENCES, rng.randint(1, 4)):
            parts.insert(rng.randrange(len(parts) + 1), s)
        posts.append(" ".join(parts))
    return posts


def _found(extractor: DisclosureExtractor, texts: list[str]) -> list[list[tuple]]:
    """Every hit of the rules per text: span, label, rule, negation, accepted or not, probability."""
    out = []
    for kept, dropped in extractor.audited(texts):
        out.append(sorted((d.start, d.end, d.label, d.rule, d.negated, d in kept, d.acceptance)
                          for d in kept + dropped))
    return out


@pytest.fixture(scope="module")
def extractors():
    today = DisclosureExtractor(acceptance="on")
    before = DisclosureExtractor(nlp=today.nlp, terms=today.terms, acceptance="on")
    before.prefilter = PreviousWindows(today.terms)
    return today, before


def _texts(pf, text):
    return [text[w.start:w.end] for w in pf.windows(text)]


def test_a_verb_without_an_i_opens_no_window_unless_family3_can_use_it(extractors):
    today, before = extractors
    for text in ["It makes me feel sad when he leaves.", "You feel happy and they felt tired.",
                 "That feeling of dread is back."]:
        assert _texts(today.prefilter, text) == [] and _texts(before.prefilter, text), text
        assert not today.prefilter.selects(text)
    for text in ["After a long day at work I really feel so sad about it.", "Ive felt numb for weeks.",
                 "Work was long. Honestly after the whole day feeling pretty hopeless.",
                 "so-I feel sad about it.", "Im feeling so sad."]:
        assert _texts(today.prefilter, text) == _texts(before.prefilter, text) != [], text
        assert today.prefilter.selects(text)


def test_fewer_windows_are_tagged_than_before(extractors):
    today, before = extractors
    posts = _posts()
    counts = [sum(len(e.prefilter.windows(p)) for p in posts) for e in (today, before)]
    assert counts[0] <= counts[1] - 10  # the table's "makes me feel", "you feel", "they feel like"


def test_todays_windows_give_the_same_disclosures_on_our_sentences(extractors):
    today, before = extractors
    posts = _posts() + synthetic_posts(150, disclosing=0.5)
    then = _found(before, posts)
    assert sum(map(len, then)) > 150  # the table really produces hits
    assert _found(today, posts) == then


@pytest.fixture(scope="module")
def dev_rows(shared_reference):
    return [json.loads(line) for line in open(shared_reference / "segments_dev.jsonl", encoding="utf-8")]


def test_todays_windows_give_the_same_disclosures_on_dev(extractors, dev_rows):
    today, before = extractors
    texts = [r["text"] for r in dev_rows]
    assert _found(today, texts) == _found(before, texts)
