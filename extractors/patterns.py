"""The three EXPRESS self-disclosure pattern families and the masking rules, as token logic.

Input is a spaCy Doc of one tagging window (tok2vec + tagger only: rules read fine-grained
Penn tags, so neither the parser nor the attribute ruler runs). Output is one Hit per trigger
phrase: the first lexicon word the rules allow to be masked, with its pattern, the rule that
let it through and whether the disclosure is negated. Character offsets are added by the caller.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import regex

from common.word_lists import load_list

if TYPE_CHECKING:  # spaCy itself is imported only where a model is loaded (extractors/nlp.py)
    from spacy.tokens import Doc, Token

VERBS = {"feel", "felt", "feeling"}
BE = {"m", "'m", "am", "was"}
HAVE = {"have", "'ve", "ve", "had", "'d", "d"}
QUESTION = {"when", "where", "how", "what", "why", "which"}
# The paper's pronoun and determiner-pronoun list: any of them before the word blocks it.
PRONOUN_LIKE = {"she", "he", "we", "they", "this", "that", "these", "those", "i", "you", "it",
                "me", "us", "him", "her", "them", "my", "your", "his", "our", "their", "mine",
                "yours", "hers", "ours", "theirs", "being", "others", "other"}
NEGATORS = {"not", "n't", "nt", "never", "no", "nor", "neither", "without"}
NEGATING_PAIRS = {("no", "longer"), ("no", "more")}
NOT_NEGATING_AFTER = {"help", "only"}  # "I can't help but feel", "not only ... but"
# Words that may stand between "I" and feel/felt without making "I" someone else's subject.
SELF = {"myself", "me"}
HEDGE_NOUNS = {"kind", "sort"}  # "kind of", "sort of" are hedges, not the lexicon word "kind"
STOPS = {".", "!", "?", ";", ":", "(", ")", "[", "]", "…", "--", "—", "–"}
AGE_GENDER = regex.compile(r"^(?:\d{1,2}[mfMF]|[mfMF]\d{1,2})$")  # Reddit "I (25F) feel"
VERB_PHRASE = 4  # words after feel/felt/feeling (families 1 and 3)
BE_PHRASE = 3    # words after I'm / I am / I was / I have been / I had been (family 2)
GAP = 3          # words allowed between "I" and the verb (family 1)
NOUN_TAGS = {"NN", "NNS"}
ADJ_TAGS = {"JJ", "JJR", "JJS"}
# A participle read as an adjective in family 2 ("I was surprised by", "I'm overwhelmed"): EXPRESS
# masks some, so they are hits, and the acceptance model (which sees the tag) keeps those a reviewer would.
PARTICIPLE_TAGS = {"VBN", "VBD"}
CLAUSE_WORDS = {"if", "because", "that", "whether"}
INTENSIFIERS = Path(__file__).parent / "data" / "intensifiers.txt"


@dataclass(frozen=True, slots=True)
class Hit:
    start_token: int
    end_token: int  # exclusive
    pattern: str
    rule: str
    negated: bool
    trigger_start: int = -1  # first token of the trigger ("I", or the sentence start in family 3)
    phrase_start: int = -1   # first token after the trigger: modifiers run from here to start_token


def norm(tok: Token) -> str:
    return tok.lower_.replace("’", "'")


def coarse(tok: Token) -> str:
    """Universal POS from the Penn tag, so the attribute ruler need not run."""
    tag = tok.tag_
    if tag.startswith("JJ"):
        return "ADJ"
    if tag in ("NN", "NNS"):
        return "NOUN"
    if tag in ("NNP", "NNPS"):
        return "PROPN"
    if tag == "MD":
        return "AUX"
    if tag.startswith("VB"):
        return "AUX" if norm(tok) in _AUX_FORMS else "VERB"
    if tag in ("PRP", "PRP$", "WP", "WP$"):
        return "PRON"
    if tag in ("DT", "PDT", "WDT"):
        return "DET"
    if tag in ("IN", "TO", "RP"):
        return "ADP"
    return "OTHER"


_AUX_FORMS = {"be", "am", "is", "are", "was", "were", "been", "being", "'m", "m", "'re", "'s",
              "have", "has", "had", "having", "'ve", "ve", "'d", "do", "does", "did", "ca", "wo"}


def _negates(toks: list[str]) -> bool:
    """Does a negator govern these words? ("can't help but feel" is no negation.)"""
    for k, t in enumerate(toks):
        nxt = toks[k + 1] if k + 1 < len(toks) else ""
        if t in NEGATORS and nxt not in NOT_NEGATING_AFTER:
            return True
        if (t, nxt) in NEGATING_PAIRS:
            return True
    return False


def _word_start(doc: Doc, i: int) -> bool:
    """Does token i begin a new whitespace word (so "don't" and "I'm" count as one word)?"""
    return i == 0 or bool(doc[i - 1].whitespace_)


def _is_word(tok: Token) -> bool:
    return not (tok.is_punct or tok.is_space or tok.text in STOPS)


def names_another_subject(tok: Token) -> bool:
    """Could this word between "I" and feel/felt be the verb's own subject, or open a clause of
    someone else's ("I think she felt", "I know my boyfriend felt", "I wonder if he felt")?"""
    pos = coarse(tok)
    if pos == "PRON" and norm(tok) not in SELF:
        return True
    if pos in ("NOUN", "PROPN") and not AGE_GENDER.match(tok.text):
        return True
    return tok.tag_ in ("WDT", "WRB") or (pos == "ADP" and norm(tok) in CLAUSE_WORDS)


def _squeezed(word: str) -> str:
    return regex.sub(r"(.)\1+", r"\1", word)


def _one_edit(a: str, b: str) -> bool:
    """Are a and b one insertion, deletion or substitution apart?"""
    if len(a) > len(b):
        a, b = b, a
    if len(b) - len(a) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b)) == 1
    return any(b[:k] + b[k + 1:] == a for k in range(len(b)))


class Intensifiers:
    """The listed intensifiers and their misspellings: a repeated letter ("sooo", "reallly"), or one
    edit away for words of five letters or more ("reall", "extremly"; not "kind" for "kinda")."""

    def __init__(self, words: Iterable[str], version: str = ""):
        self.version = version
        self.words = frozenset(w.lower() for w in words)
        self._squeezed = frozenset(_squeezed(w) for w in self.words)
        self._long = tuple(w for w in self.words if len(w) >= 5)
        self._seen: dict[str, bool] = {}

    def __contains__(self, word: str) -> bool:
        w = word.lower()
        found = self._seen.get(w)
        if found is None:
            found = w in self.words or _squeezed(w) in self._squeezed or (
                len(w) >= 5 and any(_one_edit(w, x) for x in self._long))
            if len(self._seen) < 65536:
                self._seen[w] = found
        return found


@lru_cache(maxsize=1)
def default_intensifiers() -> Intensifiers:
    words = load_list(INTENSIFIERS)
    return Intensifiers(words.names, words.version)


class PatternMatcher:
    """Finds maskable lexicon words after first-person disclosure triggers in one window."""

    def __init__(self, terms: frozenset[str], one_per_phrase: bool = True, explain: bool = False,
                 intensifiers: Intensifiers | None = None):
        self.terms = frozenset(t.lower() for t in terms)
        self.intensifiers = intensifiers if intensifiers is not None else default_intensifiers()
        self.one_per_phrase = one_per_phrase
        self.explain = explain  # also yield the lexicon words a rule kept unmasked (for audits)
        self.multi = {tuple(t.replace("-", " - ").split()): t for t in self.terms if " " in t or "-" in t}
        self.multi_len = sorted({len(k) for k in self.multi}, reverse=True)
        self.multi_first = frozenset(k[0] for k in self.multi)  # most words start none: no slicing

    def lexicon_span(self, doc: Doc, i: int) -> int:
        """Token end index of the lexicon word starting at token i, or -1."""
        tok = doc[i]
        low = norm(tok)
        if low in self.multi_first:
            for n in self.multi_len:  # "self - conscious", "mixed up"
                if i + n <= len(doc) and tuple(norm(t) for t in doc[i:i + n]) in self.multi:
                    return i + n
        if low not in self.terms:
            return -1
        if low in HEDGE_NOUNS and i + 1 < len(doc) and norm(doc[i + 1]) == "of":
            return -1
        if coarse(tok) in ("ADP", "DET", "PRON") or tok.tag_ in ("CC", "UH"):
            return -1  # a function-word homograph ("like" as a preposition) is no emotion word
        return i + 1

    def find(self, doc: Doc, sentence_start: bool = True) -> Iterator[Hit]:
        seen: set[int] = set()
        # one pass over the tokens; the families scan these strings and touch only their triggers
        tokens = list(doc)
        texts = [t.text for t in tokens]
        norms = [t.lower_.replace("’", "'") for t in tokens]  # norm() of each token
        starts = self._sentence_starts(texts, sentence_start)
        hits = [*self._family1(doc, norms), *self._family2(doc, norms), *self._family3(doc, norms, starts)]
        hits.sort(key=lambda h: ":blocked_" in h.rule)  # a masked reading wins over a blocked one
        for hit in hits:
            if hit.start_token not in seen:
                seen.add(hit.start_token)
                yield hit

    @staticmethod
    def _sentence_starts(texts: list[str], at_start: bool) -> list[int]:
        out = [0] if at_start else []
        out += [i + 1 for i, text in enumerate(texts) if text in {".", "!", "?", "…"} or "\n" in text]
        return out

    # -- family 1: I + up to 3 words + feel/felt/feeling + a phrase of up to 4 words
    def _family1(self, doc: Doc, norms: list[str]) -> Iterator[Hit]:
        for i, low in enumerate(norms):
            if low not in VERBS:
                continue
            subj = self._subject_before(doc, i)
            if subj is None:
                continue
            negated = self._negated(doc, subj + 1, i)
            yield from self._phrase(doc, i + 1, "family1", negated, trigger=f"i+{low}", trigger_start=subj)

    def _subject_before(self, doc: Doc, verb_i: int) -> int | None:
        """Index of "I" at most GAP words before the verb, within its sentence. As in EXPRESS, any
        words may stand between them, so someone else may be the verb's subject ("I think she
        felt"): the acceptance model weighs that (feature `gap_subject`, names_another_subject)."""
        words = 0
        for j in range(verb_i - 1, -1, -1):
            t = doc[j]
            if norm(t) == "i":
                return j
            if t.text in STOPS or "\n" in t.text:
                return None
            if not _is_word(t):
                continue
            if _word_start(doc, j):
                words += 1
            if words > GAP:
                return None
        return None

    @staticmethod
    def _negated(doc: Doc, start: int, end: int) -> bool:
        return _negates([norm(t) for t in doc[start:end]])

    # -- family 2: I'm / Im / I am / I was / I have been / I had been + up to 3 words (adjectives)
    def _family2(self, doc: Doc, norms: list[str]) -> Iterator[Hit]:
        for i, low in enumerate(norms):
            if low != "i":
                continue
            after = self._be_trigger_end(doc, i)
            if after is not None:
                trigger = " ".join(norms[i:after]).replace(" '", "'").replace("i m", "im")
                yield from self._phrase(doc, after, "family2", False, trigger=trigger, trigger_start=i)

    @staticmethod
    def _be_trigger_end(doc: Doc, i: int) -> int | None:
        nxt = [norm(x) for x in doc[i + 1:i + 3]]
        if nxt[:1] and nxt[0] in BE:
            return i + 2
        if len(nxt) == 2 and nxt[0] in HAVE and nxt[1] == "been":
            return i + 3
        return None

    # -- family 3: a sentence whose "feeling" has no noun, proper noun or pronoun before it
    def _family3(self, doc: Doc, norms: list[str], starts: list[int]) -> Iterator[Hit]:
        for i, low in enumerate(norms):
            if low != "feeling" or (v := doc[i]).tag_ != "VBG":
                continue  # "the feeling of ..." is a noun, not a disclosure
            begin = max((s for s in starts if s <= v.i), default=None)
            if begin is None:
                continue
            if any(coarse(t) in ("NOUN", "PROPN", "PRON") for t in doc[begin:v.i]):
                continue
            negated = self._negated(doc, begin, v.i)
            yield from self._phrase(doc, v.i + 1, "family3", negated, trigger="sentence-initial feeling",
                                    trigger_start=begin)

    def _phrase(self, doc: Doc, start: int, pattern: str, negated: bool, trigger: str,
                trigger_start: int) -> Iterator[Hit]:
        """Apply the masking rules to the words of the phrase after a trigger: up to VERB_PHRASE words
        after a feeling verb, BE_PHRASE after a form of be (family 2, adjectives only)."""
        window, adj_only = (BE_PHRASE, True) if pattern == "family2" else (VERB_PHRASE, False)
        words = 0
        before: list[Token] = []  # the phrase's words so far
        masked_at = -1
        i = start
        while i < len(doc):
            t = doc[i]
            if t.text in STOPS or "\n" in t.text:
                return
            if not _is_word(t):
                i += 1
                continue
            if _word_start(doc, i) or i == start:
                words += 1
            if words > window:
                return
            low = norm(t)
            if not before and low == "like":
                return  # "I feel like ...": an opinion, not an emotion
            if pattern == "family2" and low == "feeling":
                return  # "I am feeling ..." belongs to family 1
            end = self.lexicon_span(doc, i)
            if end > 0:
                rule = self._blocked(doc, i, end, [t for t in before if not self._intensifier(t)], masked_at,
                                     adj_only)
                if rule is not None and self.explain:
                    yield Hit(i, end, pattern, f"{pattern}:{trigger}:blocked_{rule}",
                              negated or self._negated_in(before), trigger_start, start)
                if rule is None:
                    neg = negated or self._negated_in(before)
                    yield Hit(i, end, pattern, self._rule_name(pattern, trigger, before), neg,
                              trigger_start, start)
                    if self.one_per_phrase:
                        return
                    masked_at = end - 1
                before.extend(doc[i:end])
                words += sum(1 for j in range(i + 1, end) if _word_start(doc, j))
                i = end
                continue
            before.append(t)
            i += 1

    def _intensifier(self, tok: Token) -> bool:
        """A listed intensifier (or a misspelt one) the tagger read as a verb or a noun: the rules
        below treat it as the modifier it is ("I'm reall nervous")."""
        return coarse(tok) in ("VERB", "AUX", "NOUN", "PROPN") and tok.text in self.intensifiers

    @staticmethod
    def _negated_in(before: list[Token]) -> bool:
        return _negates([norm(t) for t in before])

    @staticmethod
    def _rule_name(pattern: str, trigger: str, before: list[Token]) -> str:
        """Auditable rule id: family, trigger, and whether hedges/intensifiers came first."""
        how = "direct" if not before else "after_modifiers"
        return f"{pattern}:{trigger}:{how}"

    @staticmethod
    def _blocked(doc: Doc, i: int, end: int, before: list[Token], masked_at: int,
                 adj_only: bool) -> str | None:
        """The masking rule that keeps the word doc[i:end] unmasked, or None."""
        tok = doc[end - 1]  # the head of "self-conscious" is "conscious"
        lows = [norm(t) for t in before]
        if any(w in PRONOUN_LIKE for w in lows):
            return "after_pronoun"
        if any(coarse(t) in ("VERB", "AUX", "PROPN") for t in before):
            return "after_verb_or_name"
        if any(w in QUESTION for w in lows):
            return "after_question_word"
        if masked_at >= 0 and i >= 2 and masked_at == i - 2 and coarse(doc[i - 1]) == "ADP":
            return "after_masked_preposition"
        if adj_only:
            if tok.tag_ not in ADJ_TAGS and tok.tag_ not in PARTICIPLE_TAGS:
                return "not_adjective"
            # The paper: "a noun comes before it and the word is a complement whose head is not
            # feel/felt/feeling". A family 2 complement's head is be, so "I'm a bit nervous" stays
            # unmasked. (In family 1 the head is feel unless a verb intervenes, blocked above.)
            if any(t.tag_ in NOUN_TAGS for t in before):
                return "after_noun"
        return None
