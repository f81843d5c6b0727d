"""Segmentation as in the paper: long posts become windows around groups of masks."""
from schemas.config import ExtractConfig, SegmentConfig
from schemas.funnel import Funnel
from schemas.records import Disclosure, RawPost

from extractors.examples import build_examples
from extractors.segmentation import RegexWordPieceTokenizer, Segmenter, get_tokenizer

FILLER = "We walked to the old market and bought some bread for the week."


def _post(n_filler_before: int, n_filler_between: int) -> tuple[str, list[Disclosure]]:
    parts = [FILLER] * n_filler_before + ["I feel guilty about it."] + [FILLER] * n_filler_between \
        + ["I was so scared of the dark."] + [FILLER] * 30
    text = " ".join(parts)
    ds = []
    for word in ("guilty", "scared"):
        start = text.index(word)
        ds.append(Disclosure(start, start + len(word), word, word, "family1"))
    return text, ds


def test_short_post_stays_whole():
    text = "I feel guilty about it. " + FILLER
    d = Disclosure(7, 13, "guilty", "guilty", "family1")
    segs = Segmenter().segments(text, [d])
    assert len(segs) == 1 and segs[0].text == text and segs[0].disclosures == [d]


def test_long_post_gives_sentence_clipped_windows_within_the_token_budget():
    text, ds = _post(40, 60)  # masks far apart: two groups
    seg = Segmenter(SegmentConfig())
    tok = RegexWordPieceTokenizer()
    assert len(tok.spans(text)) > 512
    segs = seg.segments(text, ds)
    assert [s.disclosures[0].surface for s in segs] == ["guilty", "scared"]
    for s in segs:
        assert len(tok.spans(s.text)) <= 512 + 20
        assert s.text[0].isupper() and s.text.rstrip()[-1] in ".!?"  # whole sentences
        for d in s.disclosures:
            assert s.text[d.start:d.end] == d.surface


def test_masks_close_together_share_one_window():
    text, ds = _post(40, 2)
    segs = Segmenter().segments(text, ds)
    assert len(segs) == 1 and [d.surface for d in segs[0].disclosures] == ["guilty", "scared"]
    assert len(segs[0].text) < len(text)


def test_build_examples_yields_one_example_per_segment_with_index():
    class FakeFreeExtractor:  # a real stand-in: finds the two words by position
        def extract_many(self, texts):
            for t in texts:
                yield [Disclosure(t.index(w), t.index(w) + len(w), w, w, "family1") for w in ("guilty", "scared")]

    text, _ = _post(40, 60)
    funnel = Funnel()
    out = list(build_examples([RawPost(id="p1", text=text)], FakeFreeExtractor(), ExtractConfig(), funnel))
    assert [e.segment_index for e in out] == [0, 1]
    assert [e.labels for e in out] == [["guilty"], ["scared"]]
    assert all(e.masked_text.count("<mask>") == 1 for e in out)
    assert funnel.kept == 1


def test_unknown_tokenizer_is_a_clear_error():
    import pytest

    with pytest.raises(ValueError, match="unknown tokenizer"):
        get_tokenizer("nope")


def test_posts_not_tokenized_when_short_segment_as_if_they_were():
    """Texts of at most max_tokens characters skip tokenizing; around that bound (emoji, digits,
    punctuation, each one token) the segments equal those of a tokenizer without the shortcut."""
    class Tokenizing:  # the same tokenizer without `chars_per_token_min`: always tokenizes
        name = "always"

        def spans(self, text):
            return RegexWordPieceTokenizer().spans(text)

    cfg = SegmentConfig(max_tokens=16, group_tokens=4, half_window=3)
    fast, slow = Segmenter(cfg), Segmenter(cfg, tokenizer=Tokenizing())
    seen_whole = seen_split = 0
    for base, n in ((b, n) for b in ("I feel sad. 😬!! 1234567 ok. Then I was so scared, really scared. End.",
                                     "I feel sad!!.?!.😬😬😬,,;; I was so scared.") for n in range(10, len(b) + 1)):
        text = base[:n]
        start = text.find("sad")
        ds = [Disclosure(start, start + 3, "sad", "sad", "family1")] if start >= 0 and n >= start + 3 else []
        if "scared" in text:
            s = text.index("scared")
            ds.append(Disclosure(s, s + 6, "scared", "scared", "family2"))
        segs = fast.segments(text, ds)
        assert segs == slow.segments(text, ds)
        seen_whole += len(segs) == 1 and segs[0].text == text and len(text) > cfg.max_tokens
        seen_split += segs[0].text != text
    assert seen_whole and seen_split  # both sides of the bound were exercised


def test_the_cheap_token_bound_is_never_below_the_count():
    """Segmentation trusts `at_most` to call a post short without counting: on texts of letters,
    digits, marks, ASCII and non-ASCII white space, accents, emoji and other scripts it must be
    at least the tokenizer's count, and close enough on prose that posts rarely need the count."""
    import random

    tok = RegexWordPieceTokenizer()
    rng = random.Random(4)
    alphabet = list("abcdefghij0123 \t\n\x0b\x1c.,!'") + ["é", "😀", "\u00a0", "\u2003", "\u0663", "ß", "日本"]
    texts = ["", "a", "abcdefg", "1234", "a1b2", "x" * 13] + [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(5000)]
    for text in texts:
        assert tok.at_most(text) >= tok.count(text), repr(text)
    prose = " ".join(rng.choice(["I", "was", "feeling", "overwhelmed,", "today.", "My", "(24F)", "boyfriend's"])
                     for _ in range(150))
    assert tok.count(prose) <= tok.at_most(prose) <= 1.5 * tok.count(prose)
