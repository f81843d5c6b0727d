"""Self-disclosure extraction: prefilter sentences, tag them with spaCy in batches, apply patterns.

Offsets are exact character offsets in the original text: each candidate sentence is parsed
on its own and its token offsets are shifted by the sentence start.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice

from schemas.lexicon import lexicon_terms
from schemas.records import Disclosure
from spacy.language import Language

from extractors.nlp import load_nlp
from extractors.patterns import PatternMatcher
from extractors.prefilter import Prefilter
from extractors.vocabulary import label_for


class DisclosureExtractor:
    """Finds first-person emotion disclosures in texts; one instance per process."""

    def __init__(self, terms: frozenset[str] | None = None, nlp: Language | None = None,
                 batch_size: int = 256):
        self.terms = terms if terms is not None else lexicon_terms()
        self.nlp = nlp if nlp is not None else load_nlp()
        self.prefilter = Prefilter(self.terms)
        self.matcher = PatternMatcher(self.terms)
        self.batch_size = batch_size

    def extract(self, text: str) -> list[Disclosure]:
        return next(self.extract_many([text]))

    def extract_many(self, texts: Iterable[str]) -> Iterator[list[Disclosure]]:
        """One disclosure list per input text, in input order; spaCy sees candidate sentences only."""
        it = iter(texts)
        while chunk := list(islice(it, self.batch_size)):
            yield from self._extract_chunk(chunk)

    def _extract_chunk(self, texts: list[str]) -> list[list[Disclosure]]:
        jobs: list[tuple[int, int, int]] = []  # (text index, sentence start, sentence end)
        for k, text in enumerate(texts):
            jobs.extend((k, s, e) for s, e in self.prefilter.candidates(text))
        results: list[list[Disclosure]] = [[] for _ in texts]
        sentences = (texts[k][s:e] for k, s, e in jobs)
        for (k, s, _e), doc in zip(jobs, self.nlp.pipe(sentences, batch_size=self.batch_size)):
            for hit in self.matcher.find(doc):
                a = doc[hit.start_token].idx + s
                last = doc[hit.end_token - 1]
                b = last.idx + len(last.text) + s
                surface = texts[k][a:b]
                results[k].append(Disclosure(a, b, surface, label_for(surface), hit.pattern,
                                             hit.rule, hit.negated))
        for found in results:
            found.sort(key=lambda d: d.start)
        return results


def mask_text(text: str, disclosures: Iterable[Disclosure], mask: str = "<mask>") -> str:
    """Replace each disclosure span by the mask token (spans must not overlap)."""
    out: list[str] = []
    pos = 0
    for d in sorted(disclosures, key=lambda d: d.start):
        if d.start < pos:
            raise ValueError(f"overlapping disclosures at {d.start}")
        out.append(text[pos:d.start])
        out.append(mask)
        pos = d.end
    out.append(text[pos:])
    return "".join(out)
