"""The language filter on our own multilingual table (tests/filters/data/language_table.tsv): Reddit-
style English (slang, typos, very short lines), French, German, Spanish, Portuguese, Italian, Dutch
and code-switched lines. fastText decides, py3langid is asked before a drop (filters/language.py)."""
from __future__ import annotations

import json
import random
from pathlib import Path

from filters.language import LanguageFilter, detect, detect_fast
from schemas.records import RawPost

TABLE = Path(__file__).parent / "data" / "language_table.tsv"
ENGLISH = LanguageFilter(frozenset({"en"}), 0.5)


def _table() -> list[tuple[frozenset[str], str]]:
    rows = [line.split("\t", 1) for line in TABLE.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")]
    return [(frozenset(expected.split("|")), text) for expected, text in rows]


def _kept(text: str) -> bool:
    return ENGLISH.check(RawPost(id="x", text=text)) is None


def _post_length_texts(per_language: int, seed: int) -> list[tuple[str, str]]:
    """Texts of >= 20 words (the dumps recipe's min_words) joined from one language's sentences."""
    rng = random.Random(seed)
    by: dict[str, list[str]] = {}
    for langs, text in _table():
        if len(langs) == 1:
            by.setdefault(next(iter(langs)), []).append(text)
    out = []
    for lang, texts in sorted(by.items()):
        for _ in range(per_language):
            k = 2
            while len(" ".join(chosen := rng.sample(texts, k)).split()) < 20:
                k += 1
            out.append((lang, " ".join(chosen)))
    return out


def test_the_table_holds_reddit_english_six_other_languages_and_code_switched_lines():
    rows = _table()
    langs = [next(iter(ls)) for ls, _ in rows if len(ls) == 1]
    assert len(rows) >= 60 and langs.count("en") >= 40
    assert {lang: langs.count(lang) >= 8 for lang in ("fr", "de", "es", "pt", "it", "nl")} == dict.fromkeys(
        ("fr", "de", "es", "pt", "it", "nl"), True)
    assert sum(len(ls) == 2 for ls, _ in rows) >= 6
    assert sum(len(t.split()) <= 3 for ls, t in rows if ls == {"en"}) >= 8  # very short replies


def test_fasttext_names_the_language_of_at_least_95_percent_of_our_sentences():
    rows = _table()
    right = sum(detect_fast(text)[0] in langs for langs, text in rows)
    assert right / len(rows) >= 0.95, f"{right} of {len(rows)}"


def test_the_filter_keeps_no_other_language_and_drops_fewer_english_lines_than_either_identifier_alone():
    single = [(next(iter(ls)), t) for ls, t in _table() if len(ls) == 1]
    foreign_kept = [t for lang, t in single if lang != "en" and _kept(t)]
    assert foreign_kept == []

    def wrong(keep) -> int:
        return sum(keep(t) != (lang == "en") for lang, t in single)

    filter_wrong = wrong(_kept)
    assert filter_wrong < wrong(lambda t: ENGLISH.accepts(detect_fast(t)))
    assert filter_wrong < wrong(lambda t: ENGLISH.accepts(detect(t)))
    # what it still drops are replies of one or two words, which min_words drops first anyway
    assert all(len(t.split()) <= 2 for lang, t in single if lang == "en" and not _kept(t))


def test_every_post_length_text_made_from_the_table_is_kept_if_english_and_dropped_if_not():
    texts = _post_length_texts(per_language=50, seed=3)
    wrong = [(lang, t) for lang, t in texts if _kept(t) != (lang == "en")]
    assert wrong == []
    assert {lang for lang, _ in texts} == {"en", "fr", "de", "es", "pt", "it", "nl"}


def test_all_caps_english_is_english_to_fasttext():
    assert detect_fast("DO YOU REMEMBER DRIVING TOO FAST ON THAT ROAD LAST SUMMER WITH THE WINDOWS DOWN")[0] == "en"


def test_the_filter_keeps_every_real_english_segment_of_the_dev_file(shared_reference):
    lines = (shared_reference / "segments_dev.jsonl").open(encoding="utf-8")
    texts = [json.loads(line)["text"] for line in lines]
    assert len(texts) > 500
    assert [t[:60] for t in texts if not _kept(t)] == []


def test_a_long_post_sure_in_its_first_300_characters_is_kept_on_them_others_are_read_in_full(monkeypatch):
    """The quick read: fastText on QUICK_CHARS decides a post it is sure is English; a post whose
    opening is another language (or unsure) is read on SAMPLE_CHARS, then by py3langid, as before."""
    import filters.language as language

    calls: list[int] = []
    real = language.detect_fast

    def counting(text, chars=language.SAMPLE_CHARS):
        calls.append(chars)
        return real(text, chars)

    monkeypatch.setattr(language, "detect_fast", counting)
    english = ("I have been thinking about this for a long time and I finally decided to write it down. "
               "Last week my manager asked me to stay late again, and when I got home my partner had already "
               "eaten. We talked for a while about how tired we both are, and about moving closer to her "
               "parents next year. I am not sure it is the right call, but it feels better to have said it.")
    french = " ".join(t for ls, t in _table() if ls == {"fr"})
    assert len(english) > language.QUICK_CHARS and len(french) > language.QUICK_CHARS

    assert _kept(english) and calls == [language.QUICK_CHARS]
    calls.clear()
    assert not _kept(french) and calls == [language.QUICK_CHARS, language.SAMPLE_CHARS]
    calls.clear()
    _kept(french[:language.QUICK_CHARS] + " " + english)  # a French opening: read in full, whatever the verdict
    assert calls[:2] == [language.QUICK_CHARS, language.SAMPLE_CHARS]
    calls.clear()
    assert _kept(english[:200]) and calls == [language.SAMPLE_CHARS]  # short: one read of all of it
