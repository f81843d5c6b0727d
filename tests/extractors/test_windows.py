"""spaCy sees less (#17): the shortened tagging windows against those before #17 (bench/extract.py's
`PreviousWindows`), on posts built from our own sentences and on dev (../shared).

Windows now start at the "I" (a verb without one opens none unless family 3 can use it) and end
one word after the phrase's last lexicon word. The start side changes no disclosure; the end side
changes some tags at the window's edge (most often a participle becomes an adjective that family 2
accepts), so it is held to keeping every earlier hit on our sentences and to P/R per fold on dev."""
import json
import random

import pytest

import extractors.prefilter as prefilter
from bench.extract import PreviousWindows, synthetic_posts
from extractors.disclosures import DisclosureExtractor
from extractors.prefilter import Prefilter
from extractors.quality import score_folds

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


@pytest.fixture
def full_phrase_end(monkeypatch):
    """The windows' start side alone: every window ends at the phrase's last word, as before."""
    monkeypatch.setattr(prefilter, "WORDS_AFTER_TERM", 99)


def _texts(pf, text):
    return [text[w.start:w.end] for w in pf.windows(text)]


def test_verb_window_starts_at_the_i_and_a_verb_without_one_opens_none(extractors):
    pf = extractors[0].prefilter
    assert _texts(pf, "After a long day at work I really feel so sad about it.") == ["I really feel so sad about "]
    assert _texts(pf, "It makes me feel sad when he leaves.") == []
    assert _texts(pf, "You feel happy and they felt tired.") == []
    assert _texts(pf, "Work was long. Honestly after the whole day feeling pretty hopeless.") == [
        "Honestly after the whole day feeling pretty hopeless."]  # family 3: the sentence start
    assert not pf.selects("It makes me feel sad when he leaves.")
    assert pf.selects("Ive felt numb for weeks.")


def test_window_ends_one_word_after_the_last_lexicon_word(extractors):
    pf = extractors[0].prefilter
    assert _texts(pf, "I was shocked and my doctor knew it.") == ["I was shocked and "]
    assert _texts(pf, "I feel sad and lonely in here.") == ["I feel sad and lonely in "]
    assert _texts(pf, "I feel self-conscious about it.") == ["I feel self-conscious about "]


def test_shortened_windows_tag_fewer_words_than_before(extractors):
    today, before = extractors
    posts = _posts()
    chars = [sum(w.end - w.start for p in posts for w in e.prefilter.windows(p)) for e in (today, before)]
    assert chars[0] < 0.8 * chars[1]


def test_shortened_windows_keep_every_disclosure_on_our_sentences(extractors):
    """Every hit of before (span, label, rule, negation), with the same probability but where the
    shorter right context tags a family 2 word otherwise (here "I had been depressed for a long
    time": a participle before, an adjective now, which the acceptance model weighs differently)."""
    today, before = extractors
    posts = _posts() + synthetic_posts(150, disclosing=0.5)
    now, then = _found(today, posts), _found(before, posts)
    assert sum(map(len, then)) > 150  # the table really produces hits
    assert all({h[:5] for h in b} <= {h[:5] for h in a} for a, b in zip(now, then, strict=True))
    changed = [h for a, b in zip(now, then, strict=True) for h in set(a) - set(b)]
    assert len(changed) <= 0.01 * sum(map(len, then)) and all(h[3].startswith("family2:") for h in changed)


def test_the_start_side_alone_changes_no_disclosure_on_our_sentences(extractors, full_phrase_end):
    today, before = extractors
    posts = _posts(seed=9)
    assert _found(today, posts) == _found(before, posts)


@pytest.fixture(scope="module")
def dev_rows(shared_reference):
    return [json.loads(line) for line in open(shared_reference / "segments_dev.jsonl", encoding="utf-8")]


def test_dev_start_side_alone_keeps_every_disclosure(extractors, dev_rows, full_phrase_end):
    """Spans, labels, rules, negation and accept decisions are today's; a probability may move a
    little where a window no longer merges with its neighbour."""
    today, before = extractors
    texts = [r["text"] for r in dev_rows]
    now, then = _found(today, texts), _found(before, texts)
    assert [[h[:6] for h in x] for x in now] == [[h[:6] for h in x] for x in then]
    moved = [abs(a[6] - b[6]) for x, y in zip(now, then, strict=True) for a, b in zip(x, y) if a[6] != b[6]]
    assert len(moved) <= 3 and max(moved, default=0) < 0.05


def test_dev_shortened_windows_lose_no_precision_or_recall_on_either_fold(extractors, dev_rows):
    today, before = extractors
    texts = [r["text"] for r in dev_rows]
    for name, pick in (("rules", lambda k, d: k + d), ("kept", lambda k, d: k)):
        now = score_folds(dev_rows, [pick(k, d) for k, d in today.audited(texts)])
        then = score_folds(dev_rows, [pick(k, d) for k, d in before.audited(texts)])
        for fold in "AB":
            assert now[fold].precision >= then[fold].precision, (name, fold, now[fold], then[fold])
            assert now[fold].recall >= then[fold].recall, (name, fold, now[fold], then[fold])
