"""The regex prefilter opens small windows only where a trigger is followed by a lexicon word."""
from extractors.prefilter import Prefilter
from schemas.lexicon import lexicon_terms


def _windows(text):
    return [text[w.start:w.end] for w in Prefilter(lexicon_terms()).windows(text)]


def test_trigger_without_nearby_lexicon_word_opens_no_window():
    assert _windows("I feel that the meeting on Sunday went on for hours and I was sad.") == ["I was sad."]
    assert _windows("We moved in May. The commute takes an hour. I was at the library.") == []


def test_lexicon_word_beyond_the_phrase_length_opens_no_window():
    assert _windows("I am going to the store because happy people shop.") == []
    assert _windows("I felt it would be very nice, happy even.") == []


def test_window_is_a_short_slice_around_the_trigger():
    text = "This is a long sentence about many things and then I really feel so sad about it all, honestly, truly."
    (w,) = _windows(text)
    assert "feel so sad" in w and len(w) < len(text) / 2


def test_family3_window_starts_at_the_sentence_start():
    text = "Work was long. Honestly after the whole day feeling pretty hopeless."
    (w,) = _windows(text)
    assert w.startswith("Honestly") and w.endswith("hopeless.")


def test_curly_apostrophes_and_apostrophe_free_forms_are_triggers():
    for text in ["I’m so tired.", "Im so tired.", "i am so tired.", "I’ve been so tired.", "Ive been tired."]:
        assert _windows(text), text


def test_neutral_synthetic_posts_send_nothing_to_spacy():
    from bench.extract import synthetic_posts

    posts = synthetic_posts(200, disclosing=0.0)
    pf = Prefilter(lexicon_terms())
    windows = [pf.windows(p) for p in posts]
    assert sum(bool(w) for w in windows) <= 200 * 0.3  # only look-alikes ("I feel he was sad") open one
    tagged = sum(w.end - w.start for ws in windows for w in ws)
    assert tagged < 0.02 * sum(map(len, posts))


def test_ascii_fast_scan_finds_exactly_the_case_insensitive_triggers():
    """ASCII text is lowercased once and scanned case-sensitively; spans and groups must equal the
    case-insensitive TRIGGER's, whatever the case, spacing or line breaks."""
    import random

    from extractors.prefilter import TRIGGER, _triggers

    words = ["I", "i", "I'm", "I M", "Im", "IM", "I am", "I  AM", "I\tWAS", "I\nwas", "I've BEEN", "I ' ve been",
             "ive been", "I HAD been", "I'd Been", "I d been", "FEEL", "Felt", "feeling", "FEELINGS", "Ifeel",
             "sad", "so", "happy.", "x_i'm", "2i am", "am", "was", "been", "\n", "-", "'", "I'M'M",
             "I\x0bAM", "I\x0cwas", "I\rwas", "I\x1cam", "i\x1f'm", "I \x0b' ve been", "feelings", "_feel", "fe", "i_m",
             "Id been", "I'D BEEN", "iv been", "Imma", "in", "it's", "did", "him", "I.", "i,am"]
    rng = random.Random(3)
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 12))) for _ in range(600)]
    seen = 0
    for text in texts:
        assert text.isascii()
        fast = [(t.start, t.end, t.verb) for t in _triggers(text)]
        want = [(m.start(), m.end(), m.group("verb") and m.group("verb").lower()) for m in TRIGGER.finditer(text)]
        assert fast == want, text
        seen += len(fast)
    assert seen > 300


def test_selects_is_the_windows_test_stopped_at_the_first_window():
    """The build's early disclosure filter (pipeline/filter_shards.py) uses `selects`; it must pick
    exactly the texts in which extraction would open a window."""
    import random

    from extractors.disclosures import maskable_terms
    from extractors.prefilter import Prefilter

    pre = Prefilter(maskable_terms())
    rng = random.Random(11)
    pieces = ["I feel", "i'm", "Im", "I am", "I was", "I've been", "feeling", "felt", "so", "very", "not",
              "guilty", "happy", "tired", "the", "dog", "ran", ".", "!", "\n", "today", "sad", "I", "am",
              "anxious", "about", "it", "hopeless", "we", "feel", "like", "a", "cat"]
    texts = [" ".join(rng.choice(pieces) for _ in range(rng.randint(1, 30))) for _ in range(3000)]
    assert [pre.selects(t) for t in texts] == [bool(pre.windows(t)) for t in texts]
    assert 300 < sum(pre.selects(t) for t in texts) < 2900  # both kinds are in the sample


def test_the_fast_sentence_ends_are_the_matches_of_the_defining_pattern():
    """`_sentence_ends` (two stdlib scans merged) must give exactly the spans of _SENT_END, with
    every character `regex` and `re` disagree on as white space, curly quotes, ellipses, runs of
    marks and line breaks next to marks; and its white-space class is exactly `regex`'s \\s."""
    import random

    import regex

    from extractors.prefilter import _SENT_END, _WHITE, _sentence_ends

    white = "".join(chr(c) for c in range(0x3001) if regex.match(r"\s", chr(c)))
    assert regex.fullmatch(f"[{_WHITE}]+", white) and not regex.search(f"[{_WHITE}]", "".join(
        chr(c) for c in range(0x3001) if not regex.match(r"\s", chr(c))))
    pieces = list(".!?…\"'”’)]") + ["\n", "\n\n", " ", "  ", "\t", "\x1c", "\x1f", "\x85", "\u00a0", "\u2003", "\u3000",
                                   "a", "I am sad", "x."]
    rng = random.Random(8)
    texts = ["", ".", "\n", "a. b", "a.\n\nb", ".”\n c", "a.. b"] + [
        "".join(rng.choice(pieces) for _ in range(rng.randint(1, 25))) for _ in range(20000)]
    for text in texts:
        assert list(_sentence_ends(text)) == [m.span() for m in _SENT_END.finditer(text)], repr(text)
