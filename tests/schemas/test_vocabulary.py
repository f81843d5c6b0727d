"""The canonical vocabulary as versioned data: coverage, labels, vectors, checksum and checker."""
from collections import Counter

import pytest

from common.checksums import sha256_file
from schemas.lexicon import ZERO, data_versions, default_decomposition, lexicon_terms
from schemas.vocabulary import (
    DATA_DIR,
    KINDS,
    Vocabulary,
    VocabularyError,
    declared_version,
    default_path,
    default_vocabulary,
    read_entries,
)
from schemas.vocabulary.check import check_file


def test_shipped_vocabulary_matches_its_declared_checksum():
    declared = declared_version()
    assert sha256_file(DATA_DIR / declared["file"]) == declared["sha256"], "vocabulary changed: bump its version"
    assert default_vocabulary().version == declared["version"]


def test_vocabulary_declares_the_lexicon_and_decomposition_it_was_built_on():
    declared, data = declared_version(), data_versions()
    assert declared["lexicon_version"] == data["lexicon"]["version"]
    assert declared["decomposition_version"] == data["decomposition"]["version"]


def test_every_lexicon_string_has_exactly_one_row():
    rows = Counter(e.surface for e in read_entries(default_path()))
    assert set(rows) == set(lexicon_terms()) and len(rows) == 684
    assert max(rows.values()) == 1


def test_variants_stems_and_typos_collapse_to_one_concept():
    vocab = default_vocabulary()
    assert {vocab.canonical(w) for w in ("guilt", "guilty", "GUILTY ")} == {"guilty"}
    assert {vocab.canonical(w) for w in ("worri", "worry", "worried")} == {"worried"}
    assert (vocab.canonical("embarrased"), vocab.kind("embarrased")) == ("embarrassed", "typo")
    assert (vocab.kind("happi"), vocab.kind("mixed up")) == ("stem", "multiword")
    assert set(vocab.variants("guilty")) == {"guilt", "guilty"}
    assert vocab.canonical("hopeless") != vocab.canonical("hopeful")


def test_excluded_and_unknown_words_have_no_label():
    vocab = default_vocabulary()
    for word in ("hospital", "long", "kind", "like"):
        assert vocab.excluded(word) and vocab.canonical(word) is None and vocab.reason(word)
    assert vocab.canonical("exhausted") is None and not vocab.excluded("exhausted") and vocab.kind("exhausted") is None


def test_labels_are_base_rows_never_stems_or_typos_and_all_have_vectors():
    vocab = default_vocabulary()
    dec = default_decomposition()
    assert vocab.labels and set(KINDS) == {e.kind for e in vocab.entries.values()}
    for label in vocab.labels:
        assert vocab.kind(label) == "base" and vocab.canonical(label) == label
        assert label in dec and vocab.vector_source(label) == "own"


def test_a_form_missing_from_the_decomposition_uses_its_label_vector():
    vocab = default_vocabulary()
    dec = default_decomposition()
    assert "worri" not in dec
    assert vocab.vector("worri") == dec.vector("worried") != ZERO and vocab.vector_source("worri") == "label"
    assert "worri" in vocab.fallback_vectors() and "worried" not in vocab.fallback_vectors()
    assert vocab.vector("guilt") == dec.vector("guilt")  # a form with its own vector keeps it
    assert vocab.label_vector("guilt") == dec.vector("guilty")
    assert (vocab.vector("no-such-word"), vocab.vector_source("no-such-word")) == (ZERO, "none")


def test_every_observed_express_label_maps_to_a_canonical_label(shared_reference):
    vocab = default_vocabulary()
    observed = [w.strip() for w in (shared_reference / "observed-labels.txt").read_text().splitlines() if w.strip()]
    assert len(observed) == 215
    assert [w for w in observed if vocab.canonical(w) is None] == []
    assert len({vocab.canonical(w) for w in observed}) < len(observed)  # variants such as guilt/guilty merge


def test_check_passes_on_the_shipped_file():
    assert check_file(default_path()) == []


def broken_copy(tmp_path):
    """The shipped file with four faults: a stem used as a label, a duplicated row, a missing row,
    a label without a vector, and an exclusion without a reason."""
    lines = default_path().read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines:
        surface = line.split("\t")[0]
        if surface == "worried":
            continue                                     # the label's own row is missing
        if surface == "worri":
            line = "worri\tworri\tstem\tno\t"            # a stem emitted as a label
        if surface == "cheeky":
            line = "cheeky\tcheeky\tbase\tno\t"          # a label absent from the decomposition
        if surface == "scandal":
            line = "scandal\t\tbase\tyes\t"              # excluded without a reason
        out.append(line)
        if surface == "guilt":
            out.append(line)                             # a duplicated row
    bad = tmp_path / "broken.tsv"
    bad.write_text("\n".join(out) + "\n", encoding="utf-8")
    return bad


def test_check_names_every_offending_row_of_a_broken_file(tmp_path):
    problems = check_file(broken_copy(tmp_path))
    by_surface = {}
    for p in problems:
        by_surface.setdefault(p.surface, []).append(p.message)
    assert any("cannot be a canonical label" in m for m in by_surface["worri"])
    assert any("no vector" in m for m in by_surface["cheeky"])
    assert any("without a reason" in m for m in by_surface["scandal"])
    assert any("appears 2 times" in m for m in by_surface["guilt"])
    assert any("has no row" in m for m in by_surface["worried"])
    assert any("no row of its own" in m for m in by_surface["worry"])
    assert all(p.line > 0 for p in problems if p.surface != "worried")


def test_a_malformed_row_names_file_and_line(tmp_path):
    bad = tmp_path / "vocab.tsv"
    bad.write_text("surface\tlabel\tkind\texcluded\treason\nsad\tsad\tbase\tno\t\nhappi\thappy\tstemm\tno\t\n")
    with pytest.raises(VocabularyError, match=r"vocab.tsv:3: unknown kind"):
        Vocabulary.load(bad)
    bad.write_text("surface\tlabel\n")
    with pytest.raises(VocabularyError, match=r"vocab.tsv:1: header"):
        read_entries(bad)
