"""The three EXPRESS self-disclosure pattern families and the masking rules, as token logic.

Input is a spaCy Doc of one candidate sentence; output is (token span, pattern, rule, negated)
for each lexicon word the rules allow to be masked. Character offsets are added by the caller.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from spacy.tokens import Doc, Token

FEEL = {"feel", "feels", "felt", "feeling"}
QUESTION = {"when", "where", "how", "what", "why", "which", "who", "whom", "whose"}
PRONOUN_LIKE = {"this", "that", "these", "those", "being", "others", "everyone", "everybody",
                "someone", "somebody", "anyone", "anybody", "nobody", "something", "anything"}
NEGATION = {"not", "n't", "never", "no", "nt", "n’t"}
# Intensifiers and hedges may stand between the verb and the emotion word without blocking it.
HEDGES = {"so", "really", "very", "kind", "kinda", "sort", "sorta", "of", "a", "bit", "little",
          "pretty", "quite", "extremely", "super", "just", "too", "rather", "somewhat", "incredibly",
          "totally", "completely", "fairly", "more", "most", "less", "even", "still", "also",
          "honestly", "genuinely", "truly", "absolutely", "always", "sometimes", "often", "lot",
          "utterly", "deeply", "slightly", "overly", "increasingly", "hella", "mega", "seriously",
          "insanely", "terribly", "awfully", "only", "already", "now", "all", "bloody", "fucking",
          "damn", "genuinely", "actually", "literally", "mostly", "generally", "usually", "oddly",
          "strangely", "weirdly", "immensely", "enormously", "especially", "particularly", "and",
          "or", "but", "yet", "almost", "nearly", "much", "far", "way", "certainly", "definitely"}
FAM1_WINDOW = 4  # words after feel/felt/feeling
FAM2_WINDOW = 3  # words after I'm / I am / I was / I have been / I had been
GAP = 3          # words allowed between "I" and the verb


@dataclass(frozen=True)
class Hit:
    start_token: int
    end_token: int  # exclusive
    pattern: str
    rule: str
    negated: bool


def _norm(tok: Token) -> str:
    return tok.lower_.replace("’", "'")


def _is_word(tok: Token) -> bool:
    return not (tok.is_punct or tok.is_space)


def _is_i(tok: Token) -> bool:
    return tok.lower_ == "i"


class PatternMatcher:
    """Finds maskable lexicon words after first-person disclosure triggers in one sentence."""

    def __init__(self, terms: frozenset[str]):
        self.terms = terms
        self.multi = {t for t in terms if " " in t or "-" in t}

    def lexicon_span(self, doc: Doc, i: int) -> int:
        """Token end index of the lexicon word starting at token i, or -1."""
        for n in (3, 2):  # "self - conscious", "mixed up"
            if i + n <= len(doc) and self.multi:
                span = doc[i:i + n]
                if span.text.lower() in self.multi:
                    return i + n
        return i + 1 if doc[i].lower_ in self.terms else -1

    def find(self, doc: Doc) -> Iterator[Hit]:
        seen: set[int] = set()
        for hit in [*self._family1(doc), *self._family2(doc), *self._family3(doc)]:
            if hit.start_token not in seen:
                seen.add(hit.start_token)
                yield hit

    # -- family 1: I + up to 3 words + feel/felt/feeling + up to 4 words
    def _family1(self, doc: Doc) -> Iterator[Hit]:
        for v in doc:
            if v.lower_ not in FEEL:
                continue
            subj = self._subject_before(doc, v.i)
            if subj is None:
                continue
            negated = any(_norm(t) in NEGATION for t in doc[subj + 1:v.i])
            yield from self._phrase(doc, v, v.i + 1, FAM1_WINDOW, "family1", negated, adj_only=False)

    def _subject_before(self, doc: Doc, verb_i: int) -> int | None:
        """Index of "I" at most GAP words before the verb, with only auxiliaries/adverbs between."""
        words = 0
        for j in range(verb_i - 1, -1, -1):
            t = doc[j]
            if _is_i(t):
                return j
            if not _is_word(t):
                return None
            words += 1
            if words > GAP:
                return None
            if t.pos_ in {"PRON", "NOUN", "PROPN", "SCONJ"} or (t.pos_ == "VERB" and t.lower_ not in FEEL):
                return None
        return None

    # -- family 2: I'm / Im / I am / I was / I have been / I had been + up to 3 words (adjectives)
    def _family2(self, doc: Doc) -> Iterator[Hit]:
        for t in doc:
            if not _is_i(t):
                continue
            after = self._be_trigger_end(doc, t.i)
            if after is None:
                continue
            window = [w for w in doc[after:after + FAM2_WINDOW + 2] if _is_word(w)][:FAM2_WINDOW]
            if any(w.lower_ == "feeling" for w in window):
                continue  # family 1 owns "I am feeling ..."
            yield from self._phrase(doc, doc[after - 1], after, FAM2_WINDOW, "family2", False, adj_only=True)

    @staticmethod
    def _be_trigger_end(doc: Doc, i: int) -> int | None:
        nxt = [_norm(x) for x in doc[i + 1:i + 3]]
        if nxt[:1] and nxt[0] in {"'m", "m", "am", "was"}:
            return i + 2
        if len(nxt) == 2 and nxt[0] in {"have", "'ve", "had", "'d"} and nxt[1] == "been":
            return i + 3
        return None

    # -- family 3: "feeling" with no noun, proper noun, pronoun or determiner before it
    def _family3(self, doc: Doc) -> Iterator[Hit]:
        for v in doc:
            if v.lower_ != "feeling":
                continue
            if any(t.pos_ in {"NOUN", "PROPN", "PRON", "DET"} for t in doc[:v.i]):
                continue
            yield from self._phrase(doc, v, v.i + 1, FAM1_WINDOW, "family3", False, adj_only=False)

    def _phrase(self, doc: Doc, verb: Token, start: int, window: int, pattern: str,
                negated: bool, adj_only: bool) -> Iterator[Hit]:
        """Apply the masking rules to the words after a trigger."""
        words = 0
        masked = False
        noun_seen = False
        i = start
        first = True
        while i < len(doc) and words < window:
            t = doc[i]
            if not _is_word(t):
                if t.text in {".", "!", "?", ";", ":"}:
                    return
                i += 1
                continue
            low = _norm(t)
            if first and low in {"like", "as"}:
                return  # "I feel like ...": an opinion, not an emotion
            first = False
            end = self.lexicon_span(doc, i)
            if end > 0:
                words += end - i
                prev = doc[i - 1] if i > start else None
                rule = self._blocked(doc, i, verb, noun_seen, masked, prev, adj_only)
                if rule is None:
                    masked = True
                    yield Hit(i, end, pattern, f"{pattern}:masked", negated)
                i = end
                continue
            if low in NEGATION:
                negated = True
            elif low in QUESTION or low in PRONOUN_LIKE:
                return
            elif low not in HEDGES:
                if t.pos_ in {"PRON", "PROPN", "VERB", "AUX"}:
                    return
                if t.pos_ == "NOUN":
                    noun_seen = True
            words += 1
            i += 1

    @staticmethod
    def _blocked(doc: Doc, i: int, verb: Token, noun_seen: bool, masked: bool,
                 prev: Token | None, adj_only: bool) -> str | None:
        tok = doc[i]
        if adj_only and tok.pos_ != "ADJ":
            return "not_adjective"
        if noun_seen and tok.head.i != verb.i:
            return "after_noun"
        if masked and prev is not None and prev.pos_ == "ADP":
            return "after_preposition"
        return None
