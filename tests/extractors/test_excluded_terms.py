from extractors.disclosures import maskable_terms
from schemas.lexicon import lexicon_terms
from schemas.vocabulary import default_vocabulary


def test_vocabulary_exclusions_are_never_masked(extractor):
    vocab = default_vocabulary()
    excluded = {t for t in lexicon_terms() if vocab.excluded(t)}
    assert excluded and not (excluded & maskable_terms())
    assert [d.surface for d in extractor.extract("I feel hospital food is bad. I was possessed by fear.")] == []
    assert [d.surface for d in extractor.extract("I feel dumbstruck and I was cheeky.")] == []
    assert [d.surface for d in extractor.extract("I feel so guilty.")] == ["guilty"]
