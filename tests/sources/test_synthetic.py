"""The realistic-length synthetic corpus: posts of 100-300 words that compress like text, not like
a handful of templates, whose disclosures the real extractor finds at the configured share."""
import zstandard

from schemas.records import MASK, RawPost
from schemas.vocabulary import default_vocabulary
from sources.dumps import read_dump
from sources.synthetic import SyntheticSpec, synthetic_examples, synthetic_posts, write_synthetic_dump


def test_posts_are_100_to_300_words_varied_and_compress_to_hundreds_of_bytes(tmp_path):
    spec = SyntheticSpec(posts=1000, seed=4)
    posts = list(synthetic_posts(spec))
    words = sorted(len(p.record["selftext"].split()) for p in posts)
    assert words[0] >= 100 and words[-1] <= 300
    assert 135 <= sum(words) / len(words) <= 165 and words[len(words) // 2] < sum(words) / len(words)  # skewed
    sentences = [s for p in posts for s in p.record["selftext"].replace("\n\n", " ").split(". ")]
    assert len(set(sentences)) > 0.85 * len(sentences)  # not a few templates repeated (closing lines are)
    path = write_synthetic_dump(tmp_path, spec)
    assert path.name == "RS_2024-01.zst"
    assert path.stat().st_size / spec.posts > 200  # the demo templates: ~37 bytes a post
    text = "\n".join(p.text for p in posts).encode()
    assert len(text) / len(zstandard.ZstdCompressor(level=3).compress(text)) < 5.5
    read = list(read_dump(path))
    assert all(isinstance(r, RawPost) for r in read) and len(read) == spec.posts
    assert [r.text for r in read] == [p.text for p in posts] and read[0].subreddit and read[0].created_utc
    assert list(synthetic_posts(spec))[7].record == posts[7].record  # seeded


def test_the_extractor_finds_exactly_the_inserted_disclosures_at_the_configured_share(extractor):
    posts = list(synthetic_posts(SyntheticSpec(posts=300, seed=11, disclosure_share=0.2)))
    from extractors.disclosures import DisclosureExtractor

    # what the rules find (the model then judges), in every form the corpus writes: the reference
    # forms leave out family 3 after a post's first sentence, which EXPRESS never labelled
    rules = DisclosureExtractor(nlp=extractor.nlp, forms="extended", acceptance="off")
    found = list(rules.extract_many(p.text for p in posts))
    disclosing = sum(bool(f) for f in found)
    assert 0.14 <= disclosing / len(posts) <= 0.26
    for post, disclosures in zip(posts, found, strict=True):
        assert [(d.start, d.end, d.surface) for d in disclosures if not d.negated] == [
            (s.start, s.end, s.surface) for s in post.spans]
    assert {s.pattern for p in posts for s in p.spans} == {"family1", "family2", "family3"}


def test_release_rows_mask_the_disclosures_with_vocabulary_labels():
    vocab = default_vocabulary()
    rows = list(synthetic_examples(200, seed=3))
    assert len({r["post_id"] for r in rows}) == 200
    for r in rows:
        assert r["masked_text"].count(MASK) == r["n_masks"] == len(r["labels"]) >= 1
        assert all(label in vocab.labels for label in r["labels"])
        pieces = r["masked_text"].split(MASK)  # the text is the pieces with the surfaces put back
        assert "".join(a + b for a, b in zip(pieces, [*r["surfaces"], ""])) == r["text"]
        assert len(r["text"].split()) >= 100
    assert max(sum(lab == x for r in rows for lab in r["labels"]) for x in vocab.labels) < 0.1 * sum(
        r["n_masks"] for r in rows)  # labels spread well under the gate's max_label_share

