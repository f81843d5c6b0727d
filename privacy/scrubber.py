"""PII scrubbing with Microsoft Presidio: what a person could be found by becomes a placeholder.

Presidio's analyzer finds the structured kinds (privacy/recognizers.py: e-mail, URL, IP,
phone, card, SSN, IBAN, Reddit/@/Discord handles; privacy/numbers.py: cards of any grouping,
phones near a phone word, dates of birth, ID numbers after their cue; privacy/addresses.py: street addresses) with no NLP
engine at all, and person names from the words around them, a gazetteer and spaCy's NER on the
words around capitalized cues (privacy/names.py, privacy/name_cues.py). Overlapping finds are
settled first (the longer span wins, then the higher score, and grows over what it overlapped),
and Presidio's anonymizer
replaces each span by its placeholder, so the text outside the replaced spans is unchanged and
the same input always gives the same output (disclosure offsets are computed on the result).
Each kind is a [privacy] switch (schemas/config.py); `author` is blanked.

API: `Scrubber.from_config(recipe.privacy).scrub_posts(posts)` for a batch of posts (one NER
pass over all their candidate sentences), `scrub_post(post)` for one post with the default
kinds, `Scrubber(...).find_many(texts)` for what the gate checks, `settled_found(texts)` for the
scrubbed texts with their spans (`express scrub`, privacy/scrub_file.py).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from functools import lru_cache
from operator import attrgetter
from typing import Any

from privacy.recognizers import DETECTORS, digit_context, pieces, windows  # first: it imports Presidio
from presidio_analyzer import AnalyzerEngine, RecognizerRegistry, RecognizerResult  # isort: skip
from presidio_analyzer.nlp_engine import NoOpNlpEngine  # isort: skip
from presidio_anonymizer import AnonymizerEngine  # isort: skip
from presidio_anonymizer.entities import OperatorConfig  # isort: skip

from privacy.kinds import KINDS, enabled_kinds
from privacy.spans import settle, to_input, union
from schemas.records import RawPost

PLACEHOLDERS = {**{d.entity: d.placeholder for d in DETECTORS}, "PERSON": "[NAME]"}
KIND_OF = {**{d.entity: d.kind for d in DETECTORS}, "PERSON": "name"}
_FIELD_VALUES = attrgetter(*(f.name for f in fields(RawPost)))  # in RawPost's positional order


@dataclass(frozen=True)
class Found:
    """One PII span of a text: [start, end) and what it is."""

    kind: str
    entity: str
    start: int
    end: int

    @property
    def placeholder(self) -> str:
        return PLACEHOLDERS[self.entity]


class Scrubber:
    """Finds and replaces the enabled PII kinds. Loads Presidio (and the NER pipe when names are
    on) once; reuse one instance per process."""

    def __init__(self, kinds: Iterable[str] = KINDS, ner_batch_size: int | None = None) -> None:
        self.kinds = tuple(k for k in KINDS if k in set(kinds))
        unknown = set(kinds) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown PII kinds {sorted(unknown)}; known: {', '.join(KINDS)}")
        self.detectors = tuple(d for d in DETECTORS if d.kind in self.kinds)
        self._min_score = {d.entity: d.min_score for d in self.detectors}
        self.recognizers = [d.make() for d in self.detectors]
        registry = RecognizerRegistry(recognizers=self.recognizers, supported_languages=["en"])
        engine = NoOpNlpEngine(models=[{"lang_code": "en", "model_name": "none"}])
        engine.load()
        self.analyzer = AnalyzerEngine(registry=registry, nlp_engine=engine, supported_languages=["en"])
        self.anonymizer = AnonymizerEngine()
        self._operators = {e: OperatorConfig("replace", {"new_value": p}) for e, p in PLACEHOLDERS.items()}
        self.names = None
        if "name" in self.kinds:
            from privacy.names import NER_BATCH, NameFinder

            self.names = NameFinder(batch_size=ner_batch_size or NER_BATCH)

    @classmethod
    def from_config(cls, cfg: Any) -> "Scrubber":
        """The kinds a recipe's [privacy] section switches on (none when scrub_pii is off)."""
        return cached_scrubber(enabled_kinds(cfg))

    def describe(self) -> dict[str, Any]:
        """What is scrubbed and how, for the manifest, the card and Croissant."""
        from importlib.metadata import version

        return {"kinds": list(self.kinds),
                "placeholders": {KIND_OF[e]: p for e, p in PLACEHOLDERS.items() if KIND_OF[e] in self.kinds},
                "detectors": {d.entity: r.name for d, r in zip(self.detectors, self.recognizers)}
                | ({"PERSON": "relationship and introduction cues + SpacyRecognizer (en_core_web_sm NER around "
                              "capitalized cues) + FirstNameRecognizer (gazetteer first names and surnames)"}
                   if self.names else {}),
                "libraries": {p: version(p) for p in ("presidio-analyzer", "presidio-anonymizer", "phonenumbers",
                                                      "tldextract", "spacy", "names", "mimesis")}}

    def _structured(self, text: str) -> list[RecognizerResult]:
        digits = digit_context(text)
        hinted = [d for d in self.detectors if d.hint(text, digits)]
        whole = [d.entity for d in hinted if d.window is None]
        results = self._analyzed(text, 0, len(text), whole) if whole else []
        for d in hinted:
            if d.window is not None:
                for start, end in windows(text, d.window):
                    results += self._analyzed(text, start, end, [d.entity])
        return [r for r in results if r.score >= self._min_score[r.entity_type]]

    def _analyzed(self, text: str, start: int, end: int, entities: list[str]) -> list[RecognizerResult]:
        """Presidio's findings in text[start:end], as offsets into text, read in bounded pieces."""
        out = []
        for lo, hi, own_lo, own_hi in pieces(text, start, end):
            for r in self.analyzer.analyze(text[lo:hi], "en", entities=entities):
                r.start, r.end = r.start + lo, r.end + lo
                if own_lo <= r.start < own_hi:
                    out.append(r)
        return out

    def find_many(self, texts: Sequence[str], names: bool = True, structured: bool = True) -> list[list[Found]]:
        """The spans that would be replaced in each text (non-overlapping, in text order)."""
        texts = list(texts)
        per_text = [self._structured(t) if t and structured else [] for t in texts]
        if self.names is not None and names:
            from privacy.name_cues import CONTACT_KINDS, block_heads

            for text, found, people in zip(texts, per_text, self.names.find_many(texts)):
                found.extend(people)
                contacts = [r.start for r in found if r.entity_type in CONTACT_KINDS]
                found.extend(RecognizerResult("PERSON", a, b, 0.6) for a, b in block_heads(text, contacts))
        return [[Found(KIND_OF[r.entity_type], r.entity_type, r.start, r.end) for r in settle(rs, _kept)]
                for rs in per_text]

    def find(self, text: str) -> list[Found]:
        return self.find_many([text])[0]

    def scrub_many(self, texts: Sequence[str], structured: bool = True) -> list[str]:
        texts = list(texts)
        return [self._replace(t, spans) for t, spans in zip(texts, self.find_many(texts, structured=structured))]

    def scrub(self, text: str) -> str:
        return self.scrub_many([text])[0]

    def _replace(self, text: str, spans: list[Found]) -> str:
        if not spans:
            return text
        results = [RecognizerResult(s.entity, s.start, s.end, 1.0) for s in spans]
        return self.anonymizer.anonymize(text, results, operators=self._operators,
                                         merge_entities_with_spaces=False).text

    def scrub_posts(self, posts: Sequence[RawPost]) -> list[RawPost]:
        """Copies of the posts with scrubbed text fields and no author (one NER batch for all).

        `text` (what extraction reads and a release holds) is scrubbed as one string, so the name
        detector sees the very context the gate later sees; `text` is built from title and
        selftext (sources/reddit_json.py), and their scrubbed forms are cut back out of it at the
        blank line between them (placeholders hold none); other layouts are scrubbed field by field."""
        todo: list[str] = []
        for p in posts:
            todo.append(p.text)
            if not _split_back(p):
                todo += [p.title, p.selftext]
        done = iter(self.settled(todo))
        out = []
        for post in posts:
            text = next(done)
            parts = _cut(post, text)
            title, selftext = parts if parts is not None else (next(done), next(done))
            copy = RawPost(*_FIELD_VALUES(post))  # dataclasses.replace costs more, per kept post
            copy.text, copy.title, copy.selftext, copy.author = text, title, selftext, ""
            out.append(copy)
        return out


    def settled(self, texts: Sequence[str], passes: int = 3) -> list[str]:
        """The texts scrubbed until nothing changes (see settled_found)."""
        return [text for text, _ in self.settled_found(texts, passes)]

    def settled_found(self, texts: Sequence[str], passes: int = 3) -> list[tuple[str, list[Found]]]:
        """(scrubbed text, the spans replaced, as offsets into the input text) of each text, scrubbed
        until nothing changes (at most `passes` rounds): replacing one name changes the context
        the name detector reads for its neighbours, and the gate reads the scrubbed text. Later
        rounds look for names only: a placeholder (bracketed) cannot complete an e-mail, URL,
        number or handle, and the name detector re-tags only the pieces a replacement changed; a
        later round's span lies between placeholders, so it maps back onto the input text."""
        texts = list(texts)
        found = self.find_many(texts)
        out = [self._replace(t, f) for t, f in zip(texts, found)]
        changed = [i for i, (a, b) in enumerate(zip(texts, out)) if a != b] if self.names is not None else []
        for _ in range(passes - 1):
            if not changed:
                break
            still = []
            for i, more in zip(changed, self.find_many([out[i] for i in changed], structured=False)):
                if more:
                    found[i] = union(found[i], to_input(more, found[i], attrgetter("placeholder")))
                    out[i] = self._replace(texts[i], found[i])
                    still.append(i)
            changed = still
        return list(zip(out, found))


def _blank_title(p: RawPost) -> bool:
    return not p.title or p.title.isspace()


def _split_back(p: RawPost) -> bool:
    """Is the text title + blank line + selftext (or, under a blank title, the selftext alone), so
    both can be cut back out of its scrubbed form?"""
    if _blank_title(p):
        return p.text == p.selftext
    return "\n\n" not in p.title and p.text == f"{p.title}\n\n{p.selftext}"


def _cut(post: RawPost, text: str) -> tuple[str, str] | None:
    """(title, selftext) of a scrubbed text built from them, or None (scrub them one by one)."""
    if not _split_back(post):
        return None
    if _blank_title(post):
        return post.title, text
    title, sep, selftext = text.partition("\n\n")
    return (title, selftext) if sep else (text, "")  # a span across the blank line: never the raw fields


def _kept(r: RecognizerResult, start: int, end: int) -> RecognizerResult:
    return RecognizerResult(r.entity_type, start, end, r.score)


@lru_cache(maxsize=8)
def cached_scrubber(kinds: tuple[str, ...] = KINDS) -> Scrubber:
    return Scrubber(kinds)


def scrub(text: str) -> str:
    """The text with every PII kind replaced by its placeholder (default kinds)."""
    return cached_scrubber().scrub(text)


def scrub_post(post: RawPost, cfg: Any = None) -> RawPost:
    """A copy of `post` with scrubbed text fields and no author; `cfg` ([privacy]) picks the kinds.
    For many posts, `Scrubber.from_config(cfg).scrub_posts(posts)` batches the NER pass."""
    scrubber = Scrubber.from_config(cfg) if cfg is not None else cached_scrubber()
    return scrubber.scrub_posts([post])[0]
