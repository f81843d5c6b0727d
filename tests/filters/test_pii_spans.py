"""The scrubber's span algebra (privacy/spans.py) gives what comparing every pair gives, on many
spans, and Presidio never reads more than a bounded piece of a long text (its duplicate removal
compares every pair of its findings), while a span across a piece's edge is still found once and
whole: scrubbing time grows with the text, not with its square."""
from __future__ import annotations

import random
from dataclasses import dataclass

from privacy import recognizers, spans
from privacy.scrubber import Found, Scrubber


@dataclass
class Result:  # a Presidio RecognizerResult's fields, as settle reads them
    entity_type: str
    start: int
    end: int
    score: float


def _pairwise_settle(results):
    """The settling rule, comparing every kept span (what spans.settle replaced)."""
    ranked = sorted(results, key=lambda r: (-(r.end - r.start), -r.score, r.entity_type == "PERSON", r.start))
    kept = []
    for r in ranked:
        hit = [k for k in kept if k.start < r.end and r.start < k.end]
        if not hit:
            kept.append(Result(r.entity_type, r.start, r.end, r.score))
            continue
        winner = hit[0]
        winner.start, winner.end = min(winner.start, r.start), max(winner.end, r.end)
        for other in hit[1:]:
            winner.start, winner.end = min(winner.start, other.start), max(winner.end, other.end)
            kept.remove(other)
    return sorted(kept, key=lambda r: r.start)


def _pairwise_union(first, more):
    out = list(first)
    for s in more:
        hit = [k for k, f in enumerate(out) if f.start < s.end and s.start < f.end]
        if hit:
            f = out[hit[0]]
            out[hit[0]] = Found(f.kind, f.entity, min(f.start, s.start), max(f.end, s.end))
        else:
            out.append(s)
    return sorted(out, key=lambda f: f.start)


def _random_results(rng, n, text_len):
    kinds = ["PERSON", "PHONE_NUMBER", "EMAIL_ADDRESS", "US_SSN"]
    out = []
    for _ in range(n):
        start = rng.randrange(text_len)
        out.append(Result(rng.choice(kinds), start, start + rng.randint(1, 30), rng.choice([0.4, 0.6, 0.85, 1.0])))
    return out


def test_settling_many_spans_gives_what_comparing_every_pair_gives():
    rng = random.Random(7)
    for n in (0, 1, 5, 50, 400):
        results = _random_results(rng, n, 2_000)
        fast = spans.settle(results, lambda r, a, b: Result(r.entity_type, a, b, r.score))
        slow = _pairwise_settle(results)
        assert [(r.entity_type, r.start, r.end, r.score) for r in fast] == \
               [(r.entity_type, r.start, r.end, r.score) for r in slow]


def test_joining_a_later_rounds_spans_gives_what_comparing_every_pair_gives():
    rng = random.Random(8)
    for _ in range(30):
        first = [Found("name", "PERSON", r.start, r.end) for r in _pairwise_settle(_random_results(rng, 60, 3_000))]
        more = [Found("name", "PERSON", r.start, r.end) for r in _pairwise_settle(_random_results(rng, 20, 3_000))]
        assert spans.union(first, more) == _pairwise_union(first, more)


def test_presidio_reads_a_long_text_in_bounded_pieces_and_finds_a_span_across_their_edge_once(monkeypatch):
    monkeypatch.setattr(recognizers, "PIECE_CHARS", 200)
    monkeypatch.setattr(recognizers, "PIECE_MARGIN", 60)
    scrubber = Scrubber(["email", "phone"])
    read = []
    analyze = scrubber.analyzer.analyze
    monkeypatch.setattr(scrubber.analyzer, "analyze", lambda text, *a, **k: read.append(len(text)) or analyze(text, *a, **k))
    filler = "I feel calm today and the weather is mild. "
    text = filler * 4 + "mail jo.smith@example.org now. " + filler * 10 + "call 0176 123 4567 soon. " + filler * 3
    found = scrubber.find(text)
    assert [(f.kind, text[f.start:f.end]) for f in found] == [("email", "jo.smith@example.org"),
                                                              ("phone", "0176 123 4567")]
    assert len(text) > 600 and max(read) <= 200 + 2 * 60 + 40  # a piece, its margins, out to white space


def test_pieces_cover_the_text_once_at_white_space():
    text = ("word " * 90 + "\n") * 30
    parts = recognizers.pieces(text, 0, len(text))
    owned = [(a, b) for _, _, a, b in parts]
    assert owned[0][0] == 0 and owned[-1][1] == len(text)
    assert all(b == c for (_, b), (c, _) in zip(owned, owned[1:]))
    assert all(text[b - 1].isspace() for _, b in owned[:-1])
    assert recognizers.pieces(text, 5, 40) == [(5, 40, 5, 40)]  # a short range is read as it is
