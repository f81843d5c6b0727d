import json

import pytest

from extractors.disclosures import mask_text
from extractors.jsonl import InputError, extract_jsonl
from extractors.prefilter import Prefilter, sentence_spans
from schemas.lexicon import lexicon_terms


@pytest.mark.parametrize("text, surfaces, pattern", [
    ("I feel so guilty about it.", ["guilty"], "family1"),
    ("I have felt extremely angry since then.", ["angry"], "family1"),
    ("I'm scared of the dark.", ["scared"], "family2"),
    ("Im really tired.", ["tired"], "family2"),
    ("Feeling pretty hopeless today.", ["hopeless"], "family3"),
])
def test_each_pattern_family_finds_its_disclosure(extractor, text, surfaces, pattern):
    found = [d for d in extractor.extract(text) if not d.negated]
    assert [d.surface for d in found] == surfaces
    assert {d.pattern for d in found} == {pattern}


@pytest.mark.parametrize("text", [
    "I feel like he is sad.",
    "I feel he was sad.",
    "My sister is happy about her new job.",
    "I'm going to the store after work.",
])
def test_look_alikes_produce_no_disclosure(extractor, text):
    assert [d for d in extractor.extract(text) if not d.negated] == []


def test_negated_disclosures_are_marked(extractor):
    (d,) = extractor.extract("I'm not happy with how it went.")
    assert d.surface == "happy" and d.negated


def test_offsets_are_exact_in_text_with_emoji_and_curly_apostrophes(extractor):
    text = "😢😢 Okay. So… I’m so scared 😢 and honestly I feel guilty."
    found = extractor.extract(text)
    assert [text[d.start:d.end] for d in found] == [d.surface for d in found] == ["scared", "guilty"]
    assert mask_text(text, found).count("<mask>") == 2


def test_prefilter_keeps_only_sentences_with_trigger_and_lexicon_word():
    pf = Prefilter(lexicon_terms())
    text = "We went out. I feel sad today! The weather is sad. I was at home."
    picked = [text[s:e] for s, e in pf.candidates(text)]
    assert picked == ["I feel sad today!"]
    short = "a. b"
    assert [short[s:e] for s, e in sentence_spans(short)] == ["a.", "b"]


def test_extract_command_contract(tmp_path, extractor):
    src = tmp_path / "in.jsonl"
    rows = [{"id": 1, "text": "I feel so guilty. I'm not happy."}, {"id": "b", "text": "Nothing here."}]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    assert extract_jsonl(src, out, extractor=extractor) == 2
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [g["id"] for g in got] == [1, "b"]
    assert got[0]["masked_text"] == "I feel so <mask>. I'm not happy."
    for g, r in zip(got, rows, strict=True):
        for d in g["disclosures"]:
            assert r["text"][d["start"]:d["end"]] == d["surface"]
            assert set(d) >= {"start", "end", "surface", "label", "pattern", "negated"}
    assert [d["negated"] for d in got[0]["disclosures"]] == [False, True]
    assert got[1]["disclosures"] == []


def test_extract_bad_line_names_file_and_line(tmp_path, extractor):
    src = tmp_path / "in.jsonl"
    src.write_text('{"id": 1, "text": "ok"}\n{"id": 2}\n')
    with pytest.raises(InputError, match=r"in.jsonl:2"):
        extract_jsonl(src, tmp_path / "out.jsonl", extractor=extractor)
    assert not (tmp_path / "out.jsonl").exists()
    src.write_text('{"id": 1, "text": "ok"}\n\n{"id": 2, "text": "fine"}\n[3]\n')  # a blank line is skipped, still counted
    with pytest.raises(InputError, match=r"in.jsonl:4: each line must be a JSON object"):
        extract_jsonl(src, tmp_path / "out.jsonl", extractor=extractor)
    assert not (tmp_path / "out.jsonl").exists()


def test_chunk_bounds_do_not_change_what_is_found_or_its_order(extractor, monkeypatch):
    """extract_many gathers texts until their windows fill a spaCy batch (bounded by text count and
    characters); wherever the chunks are cut, every text gets the same disclosures, in order."""
    import extractors.disclosures as mod
    from extractors.disclosures import DisclosureExtractor

    texts = ["Nothing here.", "I feel so guilty. I'm scared, and feeling hopeless today.", "",
             "My sister is happy.", "I’m really anxious 😬 about **it**. I felt sad.",
             "Im happy! " * 40, "I was lonely when I read the message.", "no trigger at all " * 30]
    texts = texts * 3
    alone = [extractor.extract(t) for t in texts]
    assert sum(map(len, alone)) >= 10 and any(not found for found in alone)
    for batch_size, chars in ((256, 4_000_000), (1, 4_000_000), (3, 4_000_000), (256, 50)):
        monkeypatch.setattr(mod, "CHUNK_CHARS", chars)
        chunked = DisclosureExtractor(extractor.terms, extractor.nlp, batch_size=batch_size)
        assert list(chunked.extract_many(iter(texts))) == alone
