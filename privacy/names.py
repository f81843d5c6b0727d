"""Person names -> [NAME]: spaCy's NER (our shipped sm model) through Presidio's SpacyRecognizer,
run only on the words around a cue.

NER is the scrubber's one expensive step, and most sentences of a post hold no capitalized word
but "I" and the first word. A cue is a word starting with a capital letter that is not a common
word (spaCy's English stop words and privacy/data/name_free_words.txt, less Will and May) nor
a frequent English word by wordfreq that is not a census first name ("Unfortunately", "Facebook"
are no cues; "Chris" is); a word after a title ("Mrs. Brown") always is. Sentence-initial names
("Mike and I ...") are cues because names are not in those lists. NER reads only the WINDOW
words before and after each cue, within its sentence (the sm model looks a few tokens either way):
on real Reddit segments that is a small share of the words and finds the real names NER finds on every
sentence but 4 of them (bench/pii.py; docs/sources-and-filters.md). Found spans are trimmed to their name words
and dropped when no word is capitalized (NER's false names on Reddit text are mostly lower-case
words or acronyms), when every word is a common or emotion word (an emotion word is never
replaced), or when they touch a subreddit name or a placeholder.

The sm model misses or mislabels many first names, most of all names that are not Anglo-American
("I told Emily", "my daughter Sophie" as ORG, "Efimiya" as nothing), so a second recognizer over
the same doc takes a capitalized word that is a first name of the gazetteer (privacy/gazetteer.py:
US Census and mimesis's lists of many origins) when NER gave it no label or a confused one (ORG,
NORP, PRODUCT, WORK_OF_ART), never when it is a date or a place ("April", "Georgia"), a frequent
English word that is no census first name, or part of a compound ("Weber-Santana").

Cues in the words around a name find it with no NER at all ("my sister Anna", "Tomasz and I",
privacy/name_cues.py). Every found name is then completed over the initials, particles and name
words next to it ("Janka M. Szász", "Willemine ten Pas"), and dropped when a company word
follows ("Weber Inc.", "Thomas and Sons") or it is one word made of two everyday English words
("Bluecanvas"); the other mentions of its rare words in the text are names too.
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import accumulate

import regex

import privacy.presidio  # noqa: F401  (first: the one way in to Presidio)
from presidio_analyzer import LocalRecognizer, RecognizerResult  # isort: skip
from presidio_analyzer.nlp_engine import NerModelConfiguration, NlpArtifacts, SpacyNlpEngine  # isort: skip
from presidio_analyzer.predefined_recognizers import SpacyRecognizer  # isort: skip

from privacy.common_words import NAME_LIKE_STOP_WORDS, is_frequent_word, name_free_words
from privacy.gazetteer import place_names
from schemas.lexicon import lexicon_terms

_TITLES = r"(?:Mr|Mrs|Ms|Mx|Dr|Prof|St|Jr|Sr|vs|etc|e\.g|i\.e|approx)"
# A sentence ends after . ! ? (and closing quotes/brackets) before a space, or at a line break;
# not after a title or abbreviation ("Mrs. Thompson" stays one sentence).
_SENTENCE = regex.compile(r"(?:[^\n.!?]++|(?<=\b" + _TITLES + r")\.|[.!?]+(?![\s\"')\]]|$))*+"  # possessive: faster
                          r"(?:[.!?]+(?:[\"')\]]+[.!?]*)*(?=\s|$)|\n|$)", regex.IGNORECASE)
_NAME_TITLES = (r"(?:Mr|Mrs|Ms|Mx|Dr|Prof|Miss|Aunt|Uncle|Coach|Officer|Detective|Pastor|Captain|Capt"
                r"|Colonel|Col|Sergeant|Sgt|Lt|Lieutenant)")  # a word after one is always a cue
_AFTER_TITLE = regex.compile(r"\b" + _NAME_TITLES + r"\.?\s+$")
_TITLE_WORD = regex.compile(_NAME_TITLES + r"\.?", regex.IGNORECASE)  # a title is no part of the name
_TITLE_REACH = 12  # characters before a word where its title is looked for
# a title followed by a space anywhere: a text without one needs no per-word title check
_ANY_TITLE = regex.compile(_NAME_TITLES + r"\.?\s")
_CONTEXT = 16  # characters before a line its pieces depend on: the title reach, and the one before it
_POSSESSIVE = regex.compile(r"['’]s?$")
_CAPITALIZED = regex.compile(r"(?<![\p{L}\p{N}_'’/\[@#.-])\p{Lu}[\p{L}'’-]*")
_PROTECTED = regex.compile(r"(?<![\w/])/?r/\w+|\[[A-Z]+\]")  # subreddit names and our placeholders
_TOKEN = regex.compile(r"\S+")
# Words before and after a cue that NER reads (None: the whole sentence). On the dev file's real
# segments (2, 3) finds every name (3, 3) finds, reading fewer words; a shorter right side loses names.
WINDOW: tuple[int, int] | None = (2, 3)
_LEAD = regex.compile(r"[^\p{L}]+")
_TAIL = regex.compile(r"(?:['’]s?)?[^\p{L}]*$")
_WORD = regex.compile(r"\p{L}[\p{L}'’-]*")


def sentences(text: str) -> Iterator[tuple[int, str]]:
    """(offset, sentence) pieces covering the text: split after . ! ? and at line breaks. Text
    the pattern leaves between two sentences ("boat!)and") is a piece of its own: no words are
    ever left out."""
    at = 0
    for m in _SENTENCE.finditer(text):
        if m.start() > at and text[at:m.start()].strip():
            yield at, text[at:m.start()]
        if m.group().strip():
            yield m.start(), m.group()
        at = max(at, m.end())
    if at < len(text) and text[at:].strip():
        yield at, text[at:]


def name_cues(text: str, pos: int = 0) -> list[tuple[int, int]]:
    """Spans of the capitalized words of a text (from `pos` on) that are not common words (see
    module doc)."""
    cues = []
    titled = None  # does the text hold a title at all? most do not: then no word needs the check
    for m in _CAPITALIZED.finditer(text, pos):
        cue = _cue_word(m.group())
        if cue is None:
            continue
        if not cue:
            if titled is None:
                titled = _ANY_TITLE.search(text, max(0, pos - _TITLE_REACH)) is not None
            cue = titled and _AFTER_TITLE.search(text, max(0, m.start() - _TITLE_REACH), m.start()) is not None
        if cue:
            cues.append(m.span())  # "Mrs. Brown": a word after a title is a cue, however frequent
    return cues


@lru_cache(maxsize=65536)
def _cue_word(word: str) -> bool | None:
    """None for an acronym (ADHD, OMG, NTA: never a name), else whether the word is a cue by
    itself, i.e. not a common or frequent word (a common one is a cue only after a title)."""
    if len(word) > 1 and word.isupper():
        return None
    lower = _POSSESSIVE.sub("", word.lower())
    return lower not in name_free_words() and not is_frequent_word(lower)


def candidate_sentences(text: str, window: tuple[int, int] | None = WINDOW,
                        memo: dict[tuple[str, str], tuple[tuple[int, str], ...]] | None = None) -> list[tuple[int, str]]:
    """(offset, piece) of the text that NER reads: each sentence with a cue, or when window is
    set, only the words within (before, after) words of a cue (merged), cut at word boundaries.

    A line's pieces depend on the line and the few characters before it (a title may end the
    line before), so `memo` may keep them by both: the scrubber's second pass over a changed
    post then scans only the lines a replacement changed."""
    out: list[tuple[int, str]] = []
    start = 0
    for line in text.split("\n"):  # a sentence never spans a line break
        if line:
            key = (text[max(0, start - _CONTEXT):start], line)
            pieces = memo.get(key) if memo is not None else None
            if pieces is None:
                pieces = _line_pieces(*key, window)
                if memo is not None:
                    memo[key] = pieces
            out += [(start + off, piece) for off, piece in pieces]
        start += len(line) + 1
    return out


def _line_pieces(context: str, line: str, window: tuple[int, int] | None) -> tuple[tuple[int, str], ...]:
    """candidate_sentences of one line, given the characters before it."""
    line_cues = [(a - len(context), b - len(context)) for a, b in name_cues(context + line, len(context))]
    if not line_cues:
        return ()
    out = []
    k = 0
    for off, sentence in sentences(line):
        if k == len(line_cues):
            break  # the rest of the line holds no cue
        end = off + len(sentence)
        while k < len(line_cues) and line_cues[k][0] < off:
            k += 1
        cues = []
        while k < len(line_cues) and line_cues[k][0] < end:
            cues.append(line_cues[k][0] - off)
            k += 1
        if not cues:
            continue
        if window is None:
            out.append((off, sentence))
            continue
        words = _words_up_to(sentence, cues[-1], window[1])
        word_starts = [a for a, _ in words]
        pieces: list[list[int]] = []
        for cue_start in cues:
            i = bisect_right(word_starts, cue_start) - 1  # the word the cue starts in
            lo, hi = max(0, i - window[0]), min(len(words) - 1, i + window[1])
            if pieces and lo <= pieces[-1][1] + 1:
                pieces[-1][1] = max(pieces[-1][1], hi)
            else:
                pieces.append([lo, hi])
        out += [(off + words[lo][0], sentence[words[lo][0]:words[hi][1]]) for lo, hi in pieces]
    return tuple(out)


def _words_up_to(sentence: str, last_cue: int, after: int) -> list[tuple[int, int]]:
    """Spans of the sentence's words, up to the `after`-th word after the one `last_cue` starts in
    (the words past it are in no piece)."""
    words: list[tuple[int, int]] = []
    last = None  # index of the last word needed, once the cue's word is known
    for m in _TOKEN.finditer(sentence):
        if last is None and m.start() > last_cue:
            last = len(words) - 1 + after
        if last is not None and len(words) > last:
            break
        words.append(m.span())
    return words


@lru_cache(maxsize=1)
def gazetteer_first_names() -> frozenset[str]:
    """The gazetteer's first names (privacy/gazetteer.py), less common and emotion words, places
    and nationalities."""
    from privacy.gazetteer import first_names

    return frozenset(first_names() - name_free_words() - lexicon_terms() - NAME_LIKE_STOP_WORDS - place_names())


class FirstNameRecognizer(LocalRecognizer):
    """Capitalized gazetteer names that NER left unlabelled or mislabelled (see module doc): a
    first name unless NER calls it a date, or a place right after a place word ("moved to Austin");
    a surname only when NER gave it no label or a person's."""

    CONFUSED = frozenset({"", "PERSON", "ORG", "NORP", "PRODUCT", "WORK_OF_ART"})
    PLACES = frozenset({"GPE", "LOC", "FAC"})
    SURNAME_LABELS = frozenset({"", "PERSON"})
    PLACE_WORDS = frozenset({"in", "to", "from", "at", "near", "into", "around", "outside", "across", "through",
                             "toward", "towards", "via", "visit", "visited", "visiting", "of", "downtown", "north",
                             "south", "east", "west", "central"})

    def __init__(self) -> None:
        super().__init__(supported_entities=["PERSON"], name="FirstNameRecognizer", context=[])

    def load(self) -> None:
        from privacy.gazetteer import surnames

        self.first_names = gazetteer_first_names()
        self.surnames = surnames() - self.first_names - name_free_words() - lexicon_terms()

    def analyze(self, text: str, entities: list[str], nlp_artifacts: NlpArtifacts | None = None) -> list[RecognizerResult]:
        if nlp_artifacts is None or nlp_artifacts.tokens is None:
            return []
        doc = nlp_artifacts.tokens
        out = []
        for t in doc:
            if not t.text[:1].isupper() or t.text[1:2].isupper() or is_frequent_word(t.lower_):
                continue  # lower-case, an acronym ("DUIs"), or a frequent word
            label = t.ent_type_
            if label == "ORG" and _company_entity(doc, t):
                continue
            if len(t.text) < 3 or _holiday(doc, t):
                continue  # "Le", "Valentine's Day"
            if t.lower_ in self.first_names:
                after_place_word = t.i > 0 and doc[t.i - 1].lower_ in self.PLACE_WORDS
                ok = label in self.CONFUSED or (label in self.PLACES and not after_place_word and _rare(t.lower_))
            else:
                ok = t.lower_ in self.surnames and label in self.SURNAME_LABELS and _rare(t.lower_)
            if ok and not _in_compound(doc, t) and t.lower_ not in place_names():
                out.append(RecognizerResult("PERSON", t.idx, t.idx + len(t.text), 0.6))
            elif self._full_name(doc, t):
                out.append(RecognizerResult("PERSON", t.idx, doc[t.i + 1].idx + len(doc[t.i + 1].text), 0.6))
        return out

    NOT_PEOPLE = frozenset({"ORG", "GPE", "LOC", "FAC", "DATE", "TIME", "MONEY", "QUANTITY", "EVENT", "LAW"})

    def _full_name(self, doc, t) -> bool:
        """Two rare capitalized words in a row, a gazetteer first name then any name word or any
        name word then a gazetteer surname ("Tomomi Nishiyama", "Bonifacy Kaczmarek"), that NER
        calls no organisation, place or date."""
        if t.i + 1 >= len(doc) or not t.whitespace_:
            return False
        u = doc[t.i + 1]
        if not u.text[:1].isupper() or u.text[1:2].isupper() or len(u.text) < 2 or is_frequent_word(u.lower_):
            return False
        if t.ent_type_ in self.NOT_PEOPLE or u.ent_type_ in self.NOT_PEOPLE or not (_rare(t.lower_) and _rare(u.lower_)):
            return False
        if t.lower_ in place_names() or u.lower_ in place_names() or _in_compound(doc, u):
            return False
        return t.lower_ in self.first_names or u.lower_ in self.surnames or u.lower_ in self.first_names


SURNAME_ZIPF = 3.0  # a surname alone must be rarer than this in English ("Kowalczyk", not "Dove" or "Sober")


@lru_cache(maxsize=65536)
def _rare(lower: str) -> bool:
    from wordfreq import zipf_frequency

    return zipf_frequency(lower, "en") < SURNAME_ZIPF


@lru_cache(maxsize=1)
def _holiday(doc, token) -> bool:
    """"Valentine's Day", "Patrick's day": a name before 's day names a day."""
    i = token.i
    return i + 2 < len(doc) and doc[i + 1].lower_ in ("'s", "’s") and doc[i + 2].lower_ == "day"


def _company_entity(doc, token) -> bool:
    """Is the token part of an ORG entity that holds a frequent word ("Credit Karma",
    "Russell Investments")? Then it names a company, not a person."""
    for ent in doc.ents:
        if ent.start <= token.i < ent.end:
            return any(t.i != token.i and t.is_alpha and is_frequent_word(t.lower_) for t in ent)
    return False


def _in_compound(doc, token) -> bool:
    """Is the token joined to a neighbour by a hyphen ("Weber-Santana", "Mary-Kate" stays a name
    through NER only)?"""
    i = token.i
    return ((i + 1 < len(doc) and doc[i + 1].text == "-" and not token.whitespace_)
            or (i > 0 and doc[i - 1].text == "-" and not doc[i - 1].whitespace_))


class _NerOnlyEngine(SpacyNlpEngine):
    """Presidio's spaCy engine, with artifacts holding only what the two recognizers read (the
    doc and its entities): no lemmas and keywords, which cost as much as NER on short sentences."""

    def _doc_to_nlp_artifact(self, doc, language: str) -> NlpArtifacts:
        entities, scores = self._get_updated_entities(list(self._get_entities(doc)), self._get_scores_for_entities(doc))
        return NlpArtifacts(entities=entities, tokens=doc, tokens_indices=[], lemmas=[], nlp_engine=self,
                            language=language, scores=scores)


# cue sentences per NER batch: spaCy's NER steps a batch's docs together, so a larger batch costs
# less a piece, up to about this size (bench/README.md, "Other settings chosen from measurements")
NER_BATCH = 256


class NameFinder:
    """PERSON spans of many texts at once: one nlp.pipe over all their candidate sentences.

    A piece's spans depend on its text alone, so they are remembered (the last MEMO_PIECES
    pieces), and so are a line's pieces (the last MEMO_LINES lines): the scrubber's second pass
    over a changed post re-tags only the pieces around what the first pass replaced, and looks
    for cues only in the lines it changed."""

    MEMO_PIECES = 8192
    MEMO_LINES = 8192

    def __init__(self, batch_size: int = NER_BATCH) -> None:
        from common.spacy_model import MODEL, load_pipeline

        nlp = load_pipeline(MODEL, exclude=["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter"])
        labels = nlp.get_pipe("ner").labels
        config = NerModelConfiguration(model_to_presidio_entity_mapping={"PERSON": "PERSON"},
                                       labels_to_ignore=[label for label in labels if label != "PERSON"])
        # Presidio's engine with our loaded pipeline: its load() would look for (and download) a model.
        self.engine = _NerOnlyEngine(models=[{"lang_code": "en", "model_name": MODEL}],
                                     ner_model_configuration=config)
        self.engine.nlp = {"en": nlp}
        self.recognizers = [SpacyRecognizer(supported_entities=["PERSON"]), FirstNameRecognizer()]
        for r in self.recognizers:
            r.load()
        # wordfreq reads its word list on first use: here, at load, rather than within the first scrub
        is_frequent_word("the")
        self.batch_size = batch_size
        self._memo: dict[str, list[tuple[int, int, float]]] = {}
        self._lines: dict[tuple[str, str], tuple[tuple[int, str], ...]] = {}

    def find_many(self, texts: Sequence[str]) -> list[list[RecognizerResult]]:
        found: list[list[RecognizerResult]] = [[] for _ in texts]
        for memo, keep in ((self._memo, self.MEMO_PIECES), (self._lines, self.MEMO_LINES)):
            for stale in list(memo)[:max(0, len(memo) - keep)]:
                del memo[stale]  # before this call: what it adds all stays until it returns
        where = [(i, off, piece) for i, text in enumerate(texts)
                 for off, piece in candidate_sentences(text, memo=self._lines)]
        self._tag({piece for _, _, piece in where if piece not in self._memo})
        for i, off, piece in where:
            found[i] += [RecognizerResult("PERSON", a + off, b + off, score) for a, b, score in self._memo[piece]]
        return [_completed(text, spans) for text, spans in zip(texts, found)]

    def _tag(self, pieces: set[str]) -> None:
        """Run NER on the pieces and remember their cleaned spans."""
        if not pieces:
            return
        todo = sorted(pieces)  # a set's order varies between processes; the batches need not
        for piece, (_, artifacts) in zip(todo, self.engine.process_batch(todo, "en", batch_size=self.batch_size)):
            spans = []
            for r in (r for rec in self.recognizers for r in rec.analyze(piece, ["PERSON"], artifacts)):
                span = _clean(piece, r.start, r.end)
                if span is not None:
                    spans.append((span[0], span[1], r.score))
            self._memo[piece] = spans


CUE_SCORE = 0.85  # a name a cue points at: the words around it say so ("her maiden name is Sandgreen")


def _completed(text: str, spans: list[RecognizerResult]) -> list[RecognizerResult]:
    """NER's and the gazetteer's names with the names cues point at, each completed over the name
    words next to it; none followed by a company word; one result per span."""
    from privacy.name_cues import complete, cue_names, is_company, listed_names

    found = {}
    candidates = [(r.start, r.end, r.score) for r in spans if not _place_or_employer(text, r.start, r.end)]
    cued = cue_names(text)
    candidates += [(a, b, CUE_SCORE) for a, b in cued]
    cued = set(cued)
    candidates += [(a, b, 0.6) for a, b in listed_names(text, [(a, b) for a, b, _ in candidates])]
    for start, end, score in candidates:
        by_cue = (start, end) in cued and score == CUE_SCORE
        start, end = complete(text, start, end)
        last = text.rfind(" ", start, end)  # "Galorath Incorporated": a company word ends the span
        if _DAY_AFTER.match(text, end) or is_company(text, end) or (last > start and is_company(text, last)) \
                or (not by_cue and _compound_word(text[start:end])) or any(m.start() < end and start < m.end() for m in _PROTECTED.finditer(text, max(0, start - 40), end + 40)):
            continue
        found[(start, end)] = max(score, found.get((start, end), 0.0))
    for span in _repeats(text, list(found)):
        found.setdefault(span, 0.6)
    return [RecognizerResult("PERSON", a, b, score) for (a, b), score in sorted(found.items())]


@lru_cache(maxsize=4096)
def _compound_word(span: str) -> bool:
    """Is the span one word made of two frequent English words, and no name of the gazetteer?
    Brands and companies are named so ("Bluecanvas", "Brightforge"); people rarely, and the ones
    who are ("Goodman", "Blackwell") are in the surname list."""
    word = _POSSESSIVE.sub("", span)
    if " " in word or not word.isalpha() or len(word) < 7:
        return False
    lower = word.lower()
    from privacy.gazetteer import first_names, surnames

    if lower in first_names() or lower in surnames():
        return False
    from wordfreq import zipf_frequency

    return any(zipf_frequency(lower[:i], "en") >= COMPOUND_ZIPF and zipf_frequency(lower[i:], "en") >= COMPOUND_ZIPF
               for i in range(3, len(lower) - 2))


COMPOUND_ZIPF = 3.5  # each part of a compound brand name: an everyday English word ("canvas", "forge")


def _repeats(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Other mentions in the text of a found name's words ("directed by Ines Okafor, starring
    Okafor"): the same capitalized word, as a whole word (not inside "Ramsey-Okafor"), and no
    common, frequent or emotion word or place (a false name "Realworlds Batman" must not spread)."""
    if not spans:
        return []
    from privacy.name_cues import is_company

    words = set()
    for a, b in spans:
        for m in _WORD.finditer(text, a, b):
            w = _POSSESSIVE.sub("", m.group())
            lower = w.lower()
            if len(w) > 2 and w[0].isupper() and not w.isupper() and lower not in name_free_words() \
                    and lower not in lexicon_terms() and lower not in place_names() and not is_frequent_word(lower):
                words.add(w)
    ordered = sorted(spans)
    starts = [a for a, _ in ordered]
    reach = list(accumulate((b for _, b in ordered), max))  # the furthest end of the spans so far

    def inside_a_span(at: int) -> bool:
        k = bisect_right(starts, at) - 1
        return k >= 0 and reach[k] > at

    out = []
    for w in words:
        at = text.find(w)
        while at >= 0:
            end = at + len(w)
            if not (at and (text[at - 1].isalnum() or text[at - 1] in "_'’-")) \
                    and not (end < len(text) and (text[end].isalnum() or text[end] in "_-")) \
                    and not inside_a_span(at) and not is_company(text, end):
                out.append((at, end))  # "Thornbury Incorporated" names a company, not Marek Thornbury
            at = text.find(w, end)
    return out


_PLACE_BEFORE = regex.compile(r"(?i)(?:\b(?:in|from|near|into|around|outside|across|at|of)|\b(?:move|moved|moving|went|go|going"
                              r"|flew|fly|flying|drove|drive|driving|travell?ed|travell?ing|trip|back|came|come|coming"
                              r"|return|returned|returning|relocated?|relocating|visit|visited|visiting)\s+to)\s+$")
_EMPLOYER_BEFORE = regex.compile(r"(?i)\b(?:work|works|worked|working|job|jobs|intern|interned|employed|hired|ceo|manager)"
                                 r"\s+(?:for|at|by|of)\s+$")


_DAY_AFTER = regex.compile(r"['’]s\s+[Dd]ay\b")  # "Valentine's day" names a day
_MONTHS = frozenset({"january", "february", "march", "april", "may", "june", "july", "august", "september",
                     "october", "november", "december"})
_TIME_BEFORE = regex.compile(r"(?i)\b(?:in|on|of|since|until|till|by|before|after|early|late|mid|last|next|this)\s+$")


def _place_or_employer(text: str, start: int, end: int) -> bool:
    """Is a found name (not a first name of the gazetteer) a town after "in" / "from" / "at", or an
    employer after "I work for"? NER tags unknown towns and companies as people."""
    before = text[max(0, start - 24):start]
    if _EMPLOYER_BEFORE.search(before):
        return True
    if text[start:end].lower() in _MONTHS and _TIME_BEFORE.search(before):
        return True  # "in June", "since May": a date
    words = [w.lower() for w in text[start:end].split()]
    return (_PLACE_BEFORE.search(before) is not None and len(words) <= 2
            and not any(_POSSESSIVE.sub("", w) in gazetteer_first_names() for w in words))


def _clean(sentence: str, start: int, end: int) -> tuple[int, int] | None:
    """The span trimmed to its name words, or None when it is no name (see module doc)."""
    tokens = [(start + m.start(), start + m.end()) for m in _TOKEN.finditer(sentence[start:end])]
    while tokens and (not _is_name_token(sentence[tokens[0][0]:tokens[0][1]])
                      or _TITLE_WORD.fullmatch(sentence[tokens[0][0]:tokens[0][1]])):
        tokens.pop(0)
    while tokens and not _is_name_token(sentence[tokens[-1][0]:tokens[-1][1]]):
        tokens.pop()
    if not tokens:
        return None
    start, end = tokens[0][0], tokens[-1][1]
    lead = _LEAD.match(sentence, start, end)
    start = lead.end() if lead else start
    tail = _TAIL.search(sentence, start, end)
    end = tail.start() if tail else end
    found = _WORD.findall(sentence[start:end])
    if not any(w[0].isupper() and not (len(w) > 1 and w.isupper()) for w in found):
        return None  # lower-case words and acronyms (MIL, RSVP): NER's usual false names
    words = [w.lower() for w in found]
    if all(w in name_free_words() or w in lexicon_terms() for w in words):
        return None
    if any(m.start() < end and start < m.end() for m in _PROTECTED.finditer(sentence)):
        return None
    return start, end


def _is_name_token(token: str) -> bool:
    return _WORD.search(token) is not None and not any(c.isdigit() for c in token)
