"""The acceptance model: the probability that a careful reviewer keeps a pattern hit.

The pattern rules (patterns.py) say where a first-person disclosure *may* be; the EXPRESS authors
then reviewed the masks by hand, and no rule list captures that review ("I am alone", "I was
careful"). Each hit of the rules gets binary features the rules already compute (family, trigger
form, the word, its canonical label, tag and NRC dims, the modifiers before it, what follows it,
sentence position, negation) and a logistic-regression probability from a versioned data file
(extractors/data/acceptance-*.json: feature weights, threshold, training-data hash, fold figures).
Hits under the threshold are not masked; they are counted (`not_accepted`) and listed by
`DisclosureExtractor.explain`. Scoring is a sum of weights: no scikit-learn at run time.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import regex
import tomllib

from common.checksums import sha256_file
from extractors.patterns import Hit, coarse, names_another_subject, norm
from extractors.reference import SENTENCE_END
from schemas.lexicon import DIMS
from schemas.vocabulary import default_vocabulary

if TYPE_CHECKING:
    from spacy.tokens import Doc

DATA_DIR = Path(__file__).parent / "data"
VERSION_FILE = DATA_DIR / "acceptance.toml"
ON, OFF = "on", "off"
SETTINGS = (ON, OFF)
NOT_ACCEPTED = "not_accepted"  # funnel drop reason, and the rule suffix `explain` shows
FEATURE_SET = "hit-features-v2"  # bump when hit_features changes meaning: old models then refuse to load

# Closed lists (function words), so a feature names a construction rather than a content word.
FOLLOWERS = frozenset({"with", "of", "by", "about", "for", "that", "to", "at", "in", "on", "and",
                       "but", "or", "because", "when", "as", "like", "than", "enough", "around",
                       "after", "from", "if", "so", "now", "today", "again", "too", "all"})
PRECEDERS = frozenset({"when", "if", "because", "cause", "since", "as", "while", "until", "before",
                       "after", "and", "but", "so", "though", "although", "that", "where", "whether",
                       "how", "what", "why", "like", "than", "then", "now", "still", "also", "just",
                       "honestly", "sometimes", "often", "always", "never", "guess", "think", "know",
                       "said", "say", "or", "even", "once"})
# Features whose value is any word of a text (the modifiers, the words between "I" and feel):
# training keeps only those seen in several posts, so the model file holds no rare word of a post.
OPEN_PREFIXES = ("mod=", "gap=")
_ENDS = frozenset(".!?…")
_LAST_WORD = regex.compile(r"[\w'’]+$")
_FIRST_WORD = regex.compile(r"[\w'’]+")
_LOOK = 40  # characters looked at either side of a hit for its neighbours


@lru_cache(maxsize=4096)
def _word_features(fam: str, word: str) -> tuple[str, ...]:
    """The features of a lexicon word in a family: label, kind, surface, NRC dims (cached)."""
    vocab = default_vocabulary()
    label = vocab.canonical(word) or word
    out = [f"label={label}", f"family|label={fam}|{label}", f"kind={vocab.kind(word) or 'none'}"]
    if word != label:  # the surface form only when it is not its label ("scared" -> "scared" once)
        out.append(f"word={word}")
    # NRC decomposition dims of the word (its label's when it has none of its own)
    dims = [d for d, v in zip(DIMS, vocab.vector(word)) if v]
    out.extend(f"dim={d}" for d in dims)
    out.append(f"ndims={min(len(dims), 4)}")
    out.extend(f"family|dim={fam}|{d}" for d in dims)
    return tuple(out)


def hit_features(doc: Doc, hit: Hit, text: str, trigger_char: int, end_char: int) -> tuple[str, ...]:
    """Binary features of one hit (names only: every present feature has value 1).

    `text` is the whole text, `trigger_char` the offset of the trigger's first character in it and
    `end_char` the end of the word: the neighbours of the phrase are read from the text, since the
    tagging window may end at the word and start at the trigger."""
    fam = hit.pattern
    head = doc[hit.end_token - 1]
    word = norm(head) if hit.end_token - hit.start_token == 1 else " ".join(
        norm(t) for t in doc[hit.start_token:hit.end_token])
    parts = hit.rule.split(":")
    trigger = parts[1] if len(parts) > 1 else ""
    tag = head.tag_
    out = [f"family={fam}", f"trigger={fam}|{trigger}", f"tag={tag}", f"family|tag={fam}|{tag}",
           *_word_features(fam, word)]
    if hit.end_token - hit.start_token > 1:
        out.append("multiword")
    if hit.negated:
        out.append("negated")
    # modifiers between the trigger and the word
    start = hit.phrase_start if hit.phrase_start >= 0 else hit.start_token
    between = doc[start:hit.start_token]
    mods = [norm(t) for t in between if not (t.is_punct or t.is_space)]
    out.extend(f"mod={m}" for m in mods)
    out.append(f"mods={min(len(mods), 3)}")
    if fam == "family1" and hit.trigger_start >= 0:  # words between "I" and feel/felt
        gap_tokens = [t for t in doc[hit.trigger_start + 1:start - 1] if not (t.is_punct or t.is_space)]
        out.extend(f"gap={norm(t)}" for t in gap_tokens)
        out.append(f"gaps={min(len(gap_tokens), 3)}")
        if any(names_another_subject(t) for t in gap_tokens):
            out.append("gap_subject")  # "I think she felt": maybe someone else's feeling
    nxt = _next_word(text, end_char)
    if nxt == "other" and hit.end_token < len(doc) and doc[hit.end_token].idx > head.idx:
        out.append(f"next_pos={coarse(doc[hit.end_token])}")  # the next word was tagged with the window
    else:
        out.append(f"next={nxt}")
    if nxt in FOLLOWERS:
        out.append(f"family|next={fam}|{nxt}")
    out.append(f"prev={_prev_word(text, trigger_char)}")
    first = SENTENCE_END.search(text, 0, trigger_char) is None
    out.append("first_sentence" if first else "later_sentence")
    out.append(f"family|{'first' if first else 'later'}_sentence={fam}")
    if head.text[:1].isupper() and not head.text.isupper():
        out.append("capitalised")
    return tuple(out)


def _next_word(text: str, end: int) -> str:
    """What follows the word: the end of its sentence, a comma, other punctuation, a function
    word of FOLLOWERS, or another word."""
    tail = text[end:end + _LOOK]
    rest = tail.lstrip()
    if not rest or "\n" in tail[:len(tail) - len(rest)] or rest[0] in _ENDS:
        return "end"
    if rest[0] == ",":
        return "comma"
    m = _FIRST_WORD.match(rest)
    if m is None:
        return "punct"
    word = m.group().lower().replace("’", "'")
    return word if word in FOLLOWERS else "other"


def _prev_word(text: str, start: int) -> str:
    """What stands before the trigger: the start of a sentence, a comma, other punctuation, a
    function word of PRECEDERS, or another word."""
    head = text[max(0, start - _LOOK):start]
    before = head.rstrip()
    if not before or "\n" in head[len(before):] or before[-1] in _ENDS:
        return "start"
    if before[-1] == ",":
        return "comma"
    m = _LAST_WORD.search(before)
    if m is None:
        return "punct"
    word = m.group().lower().replace("’", "'")
    return word if word in PRECEDERS else "other"


@dataclass(frozen=True)
class AcceptanceModel:
    """A logistic regression over binary features; `probability` is its sigmoid."""

    version: str
    weights: dict[str, float]
    intercept: float
    threshold: float
    sha256: str = ""
    path: Path | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def probability(self, features: Iterable[str]) -> float:
        w = self.weights
        z = self.intercept + sum(w.get(f, 0.0) for f in features)
        return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))

    def accepts(self, probability: float) -> bool:
        return probability >= self.threshold

    def describe(self) -> dict[str, Any]:
        """What a manifest records: the model's version, its file's sha256 and its threshold."""
        out: dict[str, Any] = {"version": self.version, "sha256": self.sha256, "threshold": self.threshold,
                               "feature_set": self.meta.get("feature_set", FEATURE_SET)}
        if self.path is not None:
            out["file"] = self.path.name
        trained = self.meta.get("training_data")
        if trained:
            out["training_data_sha256"] = trained.get("sha256", "")
        return out

    def top_weights(self, n: int = 15) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """The n features that most favour keeping, and the n that most favour dropping."""
        ranked = sorted(self.weights.items(), key=lambda kv: kv[1])
        return ranked[::-1][:n], ranked[:n]


def model_from_dict(data: dict[str, Any], sha256: str = "", path: Path | None = None) -> AcceptanceModel:
    """An AcceptanceModel from the JSON form that `express train-acceptance` writes."""
    where = str(path) if path else "acceptance model"
    try:
        names: Sequence[str] = data["features"]
        coefs: Sequence[float] = data["coefficients"]
        if len(names) != len(coefs):
            raise ValueError(f"{where}: 'features' and 'coefficients' differ in length")
        if data.get("feature_set", FEATURE_SET) != FEATURE_SET:
            raise ValueError(f"{where}: feature_set {data.get('feature_set')!r} is not this code's "
                             f"{FEATURE_SET!r}; retrain with `express train-acceptance`")
        return AcceptanceModel(str(data["version"]), dict(zip(names, map(float, coefs))),
                               float(data["intercept"]), float(data["threshold"]), sha256, path,
                               {k: v for k, v in data.items() if k not in ("features", "coefficients")})
    except KeyError as exc:
        raise ValueError(f"{where}: missing key {exc.args[0]!r}") from None


def declared_model() -> dict[str, str]:
    """The shipped model's file, version and sha256 (extractors/data/acceptance.toml)."""
    with open(VERSION_FILE, "rb") as fh:
        return tomllib.load(fh)["acceptance"]


def load_model(path: str | Path | None = None) -> AcceptanceModel:
    """The shipped model (None) or a model file; the file's sha256 is recorded with it."""
    if path is None:
        return _default_model()
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    return model_from_dict(data, sha256_file(p), p)


@lru_cache(maxsize=1)
def _default_model() -> AcceptanceModel:
    declared = declared_model()
    model = load_model(DATA_DIR / declared["file"])
    if model.sha256 != declared["sha256"] or model.version != declared["version"]:
        raise ValueError(f"{VERSION_FILE}: declares {declared['version']} ({declared['sha256'][:12]}), "
                         f"but {declared['file']} is {model.version} ({model.sha256[:12]})")
    return model


def resolve(setting: str | AcceptanceModel | None) -> AcceptanceModel | None:
    """The model an `[extract] acceptance` setting means: "on" the shipped one, "off" none."""
    if setting is None or isinstance(setting, AcceptanceModel):
        return setting
    if setting == ON:
        return load_model()
    if setting == OFF:
        return None
    raise ValueError(f"acceptance must be one of {SETTINGS}, not {setting!r}")


def describe(extract_config: Any) -> dict[str, Any] | None:
    """The manifest entry of a recipe's `[extract]` section: None when acceptance is "off"."""
    model = resolve(getattr(extract_config, "acceptance", ON))
    return model.describe() if model is not None else None
