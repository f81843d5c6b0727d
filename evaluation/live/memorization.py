"""The memorization measures, as plain functions over log-probabilities and words: Min-K% Prob
(Shi et al., 2023), the longest word run a continuation shares with the true text, and the share of
its n-word runs found word for word; their summary over a run's probe rows (all, per side of the
cutoff, per month, the AUC); and the probe's settings file (evaluation/data/probe.toml).
"""
from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.datafiles import DATA_DIR, read_data_file
from evaluation.live.window import iso
from schemas.config import ConfigError, utc_seconds

PROBE_FILE = DATA_DIR / "probe.toml"
WORD = re.compile(r"\w+(?:'\w+)*")


@dataclass(frozen=True)
class ProbeSettings:
    version: str
    path: str
    sha256: str
    min_k_percent: float
    overlap_words: int
    tokens_per_word: int
    max_tokens: int
    system: str
    user: str

    def budget(self, truth_words: int) -> int:
        """Tokens an answer may take: room for as many words as the half it is compared with."""
        return max(1, min(self.max_tokens, self.tokens_per_word * truth_words))

    def messages(self, shown: str) -> list[dict[str, str]]:
        """The continuation request: the first half of a post, and nothing of its masks or answers."""
        system = [{"role": "system", "content": self.system}] if self.system else []
        return [*system, {"role": "user", "content": self.user.format(text=shown)}]


def load_probe_settings(path: str | Path | None = None) -> ProbeSettings:
    """Load and check the probe's settings; errors name the file and the key."""
    p = Path(path) if path else PROBE_FILE
    data, sha256 = read_data_file(p)
    try:
        k, cont = data["min_k"], data["continuation"]
        settings = ProbeSettings(data["version"], str(p), sha256, float(k["percent"]),
                                 int(cont["overlap_words"]), int(cont["tokens_per_word"]), int(cont["max_tokens"]),
                                 str(cont.get("system", "")), str(cont["user"]))
    except KeyError as exc:
        raise ConfigError(f"{p}: missing key {exc}") from None
    if not 0 < settings.min_k_percent <= 100:
        raise ConfigError(f"{p} [min_k] percent: must be within (0, 100]")
    if min(settings.overlap_words, settings.tokens_per_word, settings.max_tokens) < 1:
        raise ConfigError(f"{p} [continuation]: overlap_words, tokens_per_word and max_tokens must be at least 1")
    if "{text}" not in settings.user:
        raise ConfigError(f"{p} [continuation] user: needs a {{text}} placeholder")
    return settings


def min_k_prob(logprobs: Sequence[float], percent: float) -> float | None:
    """Mean log-probability of the `percent` % least likely tokens (at least one); None for no tokens.
    Higher means the model finds the text's rarest tokens less surprising: a sign it read the text."""
    lp = np.sort(np.asarray(logprobs, dtype=float))
    if not len(lp):
        return None
    return float(lp[: max(1, int(len(lp) * percent / 100))].mean())


def words(text: str) -> list[str]:
    """Lower-cased words without punctuation: what 'the same words' means to the continuation probe."""
    return WORD.findall(text.lower())


def halves(text: str) -> tuple[str, str]:
    """The first half of a text's whitespace-separated words (shown) and the rest (kept for comparing)."""
    parts = text.split()
    cut = len(parts) // 2
    return " ".join(parts[:cut]), " ".join(parts[cut:])


def longest_common_run(answer: Sequence[str], truth: Sequence[str]) -> int:
    """The most consecutive words the two share, anywhere in either."""
    match = difflib.SequenceMatcher(None, list(answer), list(truth), autojunk=False)
    return match.find_longest_match(0, len(answer), 0, len(truth)).size


def ngram_overlap(answer: Sequence[str], truth: Sequence[str], n: int) -> float | None:
    """Share of the answer's n-word runs that occur word for word in the truth; None if it has none."""
    grams = [tuple(answer[i:i + n]) for i in range(len(answer) - n + 1)]
    if not grams:
        return None
    true = {tuple(truth[i:i + n]) for i in range(len(truth) - n + 1)}
    return sum(g in true for g in grams) / len(grams)


def _mean(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept else None


def _group(rows: list[dict[str, Any]], overlap: str) -> dict[str, Any]:
    return {"rows": len(rows), "min_k_prob": _mean([r.get("min_k_prob") for r in rows]),
            "longest_common_run": _mean([r["longest_common_run"] for r in rows]),
            overlap: _mean([r[overlap] for r in rows])}


def auc_before_after(rows: list[dict[str, Any]], cutoff: int, min_rows: int) -> dict[str, Any]:
    """How well Min-K% tells rows posted before the cutoff from rows after it (0.5: not at all)."""
    from sklearn.metrics import roc_auc_score

    scored = [(r["created_utc"] < cutoff, r["min_k_prob"]) for r in rows if r.get("min_k_prob") is not None]
    before = sum(b for b, _ in scored)
    after = len(scored) - before
    if min(before, after) < min_rows:
        return {"auc": None, "before": before, "after": after,
                "note": f"too few rows to tell: {before} before and {after} after the cutoff, {min_rows} needed on each side"}
    auc = roc_auc_score([int(b) for b, _ in scored], [s for _, s in scored])
    return {"auc": float(auc), "before": before, "after": after}


def summarise(rows: list[dict[str, Any]], overlap_words: int, cutoff: str | None, min_rows: int) -> dict[str, Any]:
    """The probe rows of a run: all, per month, and per side of the cutoff with the AUC (when the run has one)."""
    overlap = f"overlap_{overlap_words}"
    months: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        months[iso(r["created_utc"])[:7]].append(r)
    out: dict[str, Any] = {"all": _group(rows, overlap), "months": {m: _group(g, overlap) for m, g in sorted(months.items())}}
    if cutoff:
        at = utc_seconds(cutoff)
        out["cutoff"] = cutoff
        out["before"] = _group([r for r in rows if r["created_utc"] < at], overlap)
        out["after"] = _group([r for r in rows if r["created_utc"] >= at], overlap)
        out["min_k_auc"] = auc_before_after(rows, at, min_rows)
    return out
