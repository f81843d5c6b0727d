"""The PII table (tests/filters/data/pii_table.tsv): every PII value must end up inside a span of
its kind (so it is replaced by the right placeholder) and every trap must survive. Prints the
confusion counts per kind."""
from collections import Counter

import pytest

from privacy.scrubber import KINDS, cached_scrubber
from tests.filters.pii_table import load_table

def score(rows, found, outputs):
    hits, misses, extra, kept, lost = Counter(), Counter(), Counter(), 0, []
    for (text, pairs, keep), spans, out in zip(rows, found, outputs, strict=True):
        covered = set()
        for kind, value in pairs:
            at = text.index(value)
            match = [j for j, s in enumerate(spans) if s.kind == kind and s.start <= at and s.end >= at + len(value)]
            (hits if match else misses)[kind] += 1
            covered.update(match)
            if match:
                assert spans[match[0]].placeholder in out
        values = [(text.index(v), text.index(v) + len(v)) for _, v in pairs]
        for j, s in enumerate(spans):
            if j not in covered and not any(a < s.end and s.start < b for a, b in values):
                extra[s.kind] += 1
        for value in keep:
            if value in out:
                kept += 1
            else:
                lost.append((value, out))
    return hits, misses, extra, kept, lost


def test_table_recall_is_complete_for_structured_kinds_and_names_and_traps_survive(capsys):
    rows = load_table()
    assert len(rows) >= 150
    per_kind = Counter(k for _, pairs, _ in rows for k, _ in pairs)
    assert all(per_kind[k] >= 5 for k in KINDS), per_kind  # several formats of each kind
    assert sum(len(keep) for _, pairs, keep in rows if not pairs) >= 80
    scrubber = cached_scrubber()
    texts = [text for text, _, _ in rows]
    found = scrubber.find_many(texts)
    outputs = scrubber.scrub_many(texts)
    hits, misses, extra, kept, lost = score(rows, found, outputs)
    with capsys.disabled():
        print(f"\nPII table: {len(rows)} sentences")
        print(f"{'kind':<6} {'caught':>6} {'missed':>6} {'extra':>5}")
        for k in KINDS:
            print(f"{k:<6} {hits[k]:>6} {misses[k]:>6} {extra[k]:>5}")
        print(f"traps kept {kept}, destroyed {len(lost)}: {lost}")
    for k in KINDS:
        if k != "name":
            assert misses[k] == 0, (k, misses)
    assert hits["name"] / (hits["name"] + misses["name"]) >= 0.9
    assert kept / (kept + len(lost)) >= 0.98
    assert sum(extra.values()) <= 3, extra  # replacements of text that is not PII stay rare


@pytest.mark.parametrize("off", KINDS)
def test_a_kind_switched_off_is_left_in_the_text(off):
    from privacy.scrubber import Scrubber

    rows = [(t, p) for t, p, _ in load_table() if any(k == off for k, _ in p)][:4]
    # without NER (cheap to build) and without ID numbers: an ID cue ("account", "number") also
    # precedes the IBANs, cards and phones it names, and takes them as [ID] when their kind is off
    scrubber = Scrubber([k for k in KINDS if k not in (off, "name", "id")])
    for text, pairs in rows:
        out = scrubber.scrub(text)
        assert all(v in out for k, v in pairs if k == off), (off, out)
    assert rows


def test_an_id_cue_before_an_iban_keeps_it_scrubbed_when_ibans_are_off():
    from privacy.scrubber import Scrubber

    text = "Account FR14 2004 1010 0505 0001 3M02 606 is the one she emptied."
    assert Scrubber([k for k in KINDS if k not in ("iban", "name")]).scrub(text) == "Account [ID] is the one she emptied."
