"""Self-disclosure extraction: prefilter windows, tag them with spaCy in batches, apply patterns,
then keep the hits the acceptance model accepts (extractors/acceptance.py; "off" keeps them all).

Offsets are exact character offsets in the original text: each window is tagged on its own and
its token offsets are shifted by the window start. The text spaCy sees is a same-length copy of
the window with markdown marks, control characters and odd spaces blanked, curly apostrophes
straightened and ALL-CAPS words lower-cased, so tags are better and offsets never drift.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import regex
from schemas.lexicon import lexicon_terms
from schemas.vocabulary import default_vocabulary
from schemas.records import MASK, Disclosure

from extractors.acceptance import NOT_ACCEPTED, ON, AcceptanceModel, hit_features, resolve
from extractors.patterns import PatternMatcher
from extractors.prefilter import Prefilter, Window
from extractors.quotes import MASK_QUOTES, QUOTE_LINES, QUOTED, SKIP_QUOTES, QuoteLines
from extractors.reference import EXTENDED_TAG, FORMS, REFERENCE, ReferenceReach
from extractors.vocabulary import label_for

if TYPE_CHECKING:
    from spacy.language import Language

_ODD_SPACES = "\u00a0\u200b\u200c\u200d\u2060\ufeff\u2009\u200a\u202f\u3000" + "".join(
    chr(c) for c in range(32) if chr(c) != "\n")
_BLANK = str.maketrans({"*": " ", "_": " ", "~": " ", "`": " ", "’": "'", "‘": "'", "#": " ", ">": " ",
                        **{c: " " for c in _ODD_SPACES}})
# Bounds of one extraction chunk (texts whose windows are tagged together).
CHUNK_TEXTS_PER_BATCH = 16
CHUNK_CHARS = 4_000_000
_CAPS = regex.compile(r"\b[[:upper:]]{2,}\b")


def tagging_text(window: str) -> str:
    """A same-length copy of a window that the tagger handles better (see module docstring)."""
    return _CAPS.sub(lambda m: m.group().lower(), window.translate(_BLANK))


def maskable_terms() -> frozenset[str]:
    """Lexicon strings the vocabulary does not exclude as non-emotions or too ambiguous to mask."""
    vocab = default_vocabulary()
    return frozenset(t for t in lexicon_terms() if not vocab.excluded(t))


@dataclass(frozen=True, slots=True)
class Candidate:
    """One hit of the rules: its disclosure (with `acceptance` when a model scored it), the
    features the model saw, and whether it is kept."""

    disclosure: Disclosure
    features: tuple[str, ...]
    accepted: bool


class DisclosureExtractor:
    """Finds first-person emotion disclosures in texts; one instance per process.

    `acceptance`: "on" (the shipped acceptance model), "off" (the rules alone) or a model.
    `quote_lines`: "mask" finds in `>` quote lines like any other, "skip" leaves them (quotes.py)."""

    def __init__(self, terms: frozenset[str] | None = None, nlp: Language | None = None,
                 batch_size: int = 256, one_per_phrase: bool = True, forms: str = REFERENCE,
                 acceptance: str | AcceptanceModel | None = ON, quote_lines: str = MASK_QUOTES):
        if forms not in FORMS:
            raise ValueError(f"forms must be one of {FORMS}, not {forms!r}")
        if quote_lines not in QUOTE_LINES:
            raise ValueError(f"quote_lines must be one of {QUOTE_LINES}, not {quote_lines!r}")
        self.forms = forms  # "reference": only the trigger forms that produced EXPRESS labels
        self.quote_lines = quote_lines
        self.model = resolve(acceptance)
        self.terms = terms if terms is not None else maskable_terms()
        if nlp is None:
            from extractors.nlp import load_tagger  # spaCy is imported with the model, not with this module

            nlp = load_tagger()
        self.nlp = nlp
        self.prefilter = Prefilter(self.terms)
        self.matcher = PatternMatcher(self.terms, one_per_phrase=one_per_phrase)
        self.batch_size = batch_size

    def extract(self, text: str) -> list[Disclosure]:
        return next(self.extract_many([text]))

    def explain(self, text: str) -> list[Disclosure]:
        """Like extract, plus the lexicon words a masking rule kept (rule `...:blocked_<why>`) and
        the hits the acceptance model dropped (rule `...:not_accepted`, with their probability)."""
        auditor = DisclosureExtractor(self.terms, self.nlp, self.batch_size, self.matcher.one_per_phrase,
                                      self.forms, self.model, self.quote_lines)
        auditor.matcher.explain = True
        out = []
        for c in next(auditor.candidates([text])):
            d = c.disclosure
            if not c.accepted and not d.rule.endswith(f":{QUOTED}"):
                d = Disclosure(d.start, d.end, d.surface, d.label, d.pattern, f"{d.rule}:{NOT_ACCEPTED}",
                               d.negated, d.acceptance)
            out.append(d)
        return out

    def extract_many(self, texts: Iterable[str]) -> Iterator[list[Disclosure]]:
        """One list of accepted disclosures per input text, in input order (see `candidates`)."""
        for found in self.candidates(texts, features=False):
            yield [c.disclosure for c in found if c.accepted]

    def audited(self, texts: Iterable[str]) -> Iterator[tuple[list[Disclosure], list[Disclosure]]]:
        """(accepted, not accepted) disclosures per input text, in input order."""
        for found in self.candidates(texts, features=False):
            yield ([c.disclosure for c in found if c.accepted], [c.disclosure for c in found if not c.accepted])

    def candidates(self, texts: Iterable[str], features: bool = True) -> Iterator[list[Candidate]]:
        """Every hit of the rules per input text, in input order; spaCy sees candidate windows only.
        Features are computed when asked (training) or when a model needs them.

        Texts are gathered until their windows fill one spaCy batch (most texts have none, and
        spaCy costs a third more in batches of a few windows), at most CHUNK_TEXTS_PER_BATCH
        batches' worth of texts or CHUNK_CHARS characters, so memory stays bounded."""
        chunk: list[str] = []
        jobs: list[tuple[int, Window]] = []
        chars = 0
        for text in texts:
            found = self.prefilter.windows(text)
            if found:  # most texts have none
                k = len(chunk)
                jobs.extend((k, w) for w in found)
            chunk.append(text)
            chars += len(text)
            if (len(jobs) >= self.batch_size or chars >= CHUNK_CHARS
                    or len(chunk) >= CHUNK_TEXTS_PER_BATCH * self.batch_size):
                yield from self._tag_chunk(chunk, jobs, features)
                chunk, jobs, chars = [], [], 0
        if chunk:
            yield from self._tag_chunk(chunk, jobs, features)

    def _tag_chunk(self, texts: list[str], jobs: list[tuple[int, Window]],
                   features: bool) -> list[list[Candidate]]:
        """Tag the windows `jobs` ((text index, window)) of `texts`, apply the patterns and score."""
        results: list[list[Candidate]] = [[] for _ in texts]
        model = self.model
        want = features or model is not None
        reach: dict[int, ReferenceReach] = {}
        quotes: dict[int, QuoteLines] = {}
        windows = (tagging_text(texts[k][w.start:w.end]) for k, w in jobs)
        batch = max(self.batch_size, len(jobs))  # one batch per chunk: no small tail batch
        for (k, w), doc in zip(jobs, self.nlp.pipe(windows, batch_size=batch)):
            for hit in self.matcher.find(doc, w.sentence_start):
                a = doc[hit.start_token].idx + w.start
                last = doc[hit.end_token - 1]
                b = last.idx + len(last.text) + w.start
                rule = hit.rule
                if k not in reach:
                    reach[k] = ReferenceReach(texts[k])
                if not reach[k].reaches(hit.pattern, a):
                    if self.forms == REFERENCE:
                        continue
                    rule += EXTENDED_TAG
                quoted = False
                if self.quote_lines == SKIP_QUOTES:
                    if k not in quotes:
                        quotes[k] = QuoteLines(texts[k])
                    quoted = quotes[k].holds(a)
                    if quoted and not self.matcher.explain:
                        continue
                surface = texts[k][a:b]
                feats: tuple[str, ...] = ()
                p = None
                if want and ":blocked_" not in hit.rule:  # a blocked word (explain) is no candidate
                    trigger_char = doc[max(hit.trigger_start, 0)].idx + w.start
                    feats = hit_features(doc, hit, texts[k], trigger_char, b)
                    if model is not None:
                        p = model.probability(feats)
                if quoted:  # explain only: shown, never kept
                    rule += f":{QUOTED}"
                d = Disclosure(a, b, surface, label_for(surface), hit.pattern, rule, hit.negated, p)
                results[k].append(Candidate(d, feats, not quoted and (p is None or model.accepts(p))))
        for found in results:
            found.sort(key=lambda c: c.disclosure.start)
        return results


def mask_text(text: str, disclosures: Iterable[Disclosure], mask: str = MASK) -> str:
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
