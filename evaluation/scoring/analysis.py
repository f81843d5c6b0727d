"""Measures beyond the paper's four: Hamming accuracy, canonical-label and top-k accuracy,
per-dimension precision/recall/F1, label -> prediction confusions, label distributions, intervals.

Conventions: like AccL/AccV, Hamming, canonical and top-k accuracy divide by ALL masks (a mask of
an invalid row scores 0); per-dimension scores, confusions and the model's label distribution use
the masks of valid rows, where a prediction exists to compare. Per gold word (`labels`), AccL divides
by all of its masks too, and its wrong answers are those of valid rows.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from schemas.lexicon import DIMS, Decomposition

from evaluation.scoring.metrics import score_row
from evaluation.scoring.stats import bootstrap_intervals

TOP_K = (1, 3, 5)
TOP_WRONG = 5  # the most frequent wrong answers shown per gold word
Row = tuple[list[str], list[str] | None, list[list[str]] | None]


def canonical_mapper() -> tuple[str, Callable[[str], str]]:
    """Canonical labels from the shipped vocabulary (schemas/vocabulary); a word outside it keeps
    its lower-cased surface, so it matches only the same unmapped word."""
    from schemas.vocabulary import default_vocabulary

    vocab = default_vocabulary()
    return f"vocabulary {vocab.version}", lambda w: vocab.canonical(w) or w.strip().lower()


def entropy_bits(counts: Counter[str]) -> float:
    total = sum(counts.values())
    return -sum(c / total * math.log2(c / total) for c in counts.values() if c) if total else 0.0


def jensen_shannon(p: Counter[str], q: Counter[str]) -> float:
    """JS divergence in bits (0 = same distribution, 1 = disjoint)."""
    tp, tq = sum(p.values()), sum(q.values())
    if not tp or not tq:
        return 0.0
    js = 0.0
    for w in sorted(set(p) | set(q)):  # one order, so every run of the same rows sums alike
        a, b = p[w] / tp, q[w] / tq
        m = (a + b) / 2
        js += (a * math.log2(a / m) if a else 0.0) + (b * math.log2(b / m) if b else 0.0)
    return js / 2


def distribution(counts: Counter[str], top: int) -> dict[str, Any]:
    total = sum(counts.values())
    most = counts.most_common(top)
    return {"masks": total, "distinct": len(counts), "entropy_bits": entropy_bits(counts),
            "top_share": most[0][1] / total if total else 0.0, "top": [[w, c] for w, c in most]}


def per_gold(human: Counter[str], hits: Counter[str], invalid: Counter[str],
             pairs: Counter[tuple[str, str]]) -> list[dict[str, Any]]:
    """Per gold word, commonest first: its masks, AccL, masks of invalid rows and its most frequent
    wrong answers (ties in word order, so the same rows always list the same words)."""
    wrong: dict[str, dict[str, int]] = {}
    for (g, p), c in pairs.items():
        wrong.setdefault(g, {})[p] = c
    return [{"gold": g, "masks": n, "hits": hits[g], "AccL": hits[g] / n, "invalid": invalid[g],
             "wrong": [[p, c] for p, c in sorted(wrong.get(g, {}).items(), key=lambda pc: (-pc[1], pc[0]))[:TOP_WRONG]]}
            for g, n in sorted(human.items(), key=lambda gc: (-gc[1], gc[0]))]


def analyse(rows: Iterable[Row], dec: Decomposition, top_labels: int = 15, top_confusions: int = 20,
            bootstrap: int = 1000, seed: int = 0) -> dict[str, Any]:
    """All extended measures in one streaming pass over (gold, parsed, ranked) rows."""
    mapping_name, canon = canonical_mapper()
    human: Counter[str] = Counter()
    model: Counter[str] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    gold_hits: Counter[str] = Counter()
    gold_invalid: Counter[str] = Counter()
    dim_tp, dim_fp, dim_fn = np.zeros(len(DIMS)), np.zeros(len(DIMS)), np.zeros(len(DIMS))
    topk_hits = Counter()
    ranked_rows = canonical_hits = 0
    arrays: dict[str, list[float]] = {k: [] for k in ("masks", "word_hits", "vector_hits", "f1_sum", "valid", "hamming_sum")}
    for gold, parsed, ranked in rows:
        s = score_row(gold, parsed, dec)
        golds = [g.strip().lower() for g in gold]
        human.update(golds)
        hamming = 0.0
        if s.valid:
            for g, p in zip(gold, parsed or []):
                gv, pv = np.array(dec.vector(g)), np.array(dec.vector(p))
                hamming += float((gv == pv).mean())
                dim_tp += (gv == 1) & (pv == 1)
                dim_fp += (gv == 0) & (pv == 1)
                dim_fn += (gv == 1) & (pv == 0)
                model[p.strip().lower()] += 1
                if g.strip().lower() != p.strip().lower():
                    pairs[(g.strip().lower(), p.strip().lower())] += 1
                else:
                    gold_hits[g.strip().lower()] += 1
                canonical_hits += canon(g) == canon(p)
        else:
            gold_invalid.update(golds)
        if ranked is not None and len(ranked) == len(gold):
            ranked_rows += 1
            for g, cands in zip(golds, ranked):
                lowered = [c.strip().lower() for c in cands]
                for k in TOP_K:
                    topk_hits[k] += g in lowered[:k]
        for key, value in (("masks", s.masks), ("word_hits", s.word_hits), ("vector_hits", s.vector_hits),
                           ("f1_sum", s.f1_sum), ("valid", float(s.valid)), ("hamming_sum", hamming)):
            arrays[key].append(value)
    per_row = {k: np.asarray(v, dtype=float) for k, v in arrays.items()}
    masks = int(per_row["masks"].sum())
    n_rows = len(per_row["masks"])
    per_dim = {}
    for i, dim in enumerate(DIMS):
        tp, fp, fn = dim_tp[i], dim_fp[i], dim_fn[i]
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        per_dim[dim] = {"precision": float(prec), "recall": float(rec),
                        "f1": float(2 * prec * rec / (prec + rec)) if prec + rec else 0.0, "support": int(tp + fn)}
    shown = [w for w, _ in human.most_common(top_labels)]
    shown += [w for w, _ in model.most_common(top_labels) if w not in shown]
    return {
        "rows": n_rows,
        "masks": masks,
        "invalid_rows": int(n_rows - per_row["valid"].sum()),
        "Hamming": float(per_row["hamming_sum"].sum() / masks) if masks else 0.0,
        "canonical_accuracy": canonical_hits / masks if masks else 0.0,
        "canonical_mapping": mapping_name,
        "top_k": ({str(k): topk_hits[k] / masks for k in TOP_K} if ranked_rows == n_rows and masks else None),
        "per_dimension": per_dim,
        "confusions": [{"gold": g, "predicted": p, "count": c} for (g, p), c in pairs.most_common(top_confusions)],
        "labels": per_gold(human, gold_hits, gold_invalid, pairs),
        "label_frequency": [{"label": w, "human": human[w], "model": model[w]} for w in shown],
        "distribution": {"human": distribution(human, top_labels), "model": distribution(model, top_labels),
                         "jensen_shannon_bits": jensen_shannon(human, model)},
        "intervals": {"level": 0.95, "samples": bootstrap, "seed": seed,
                      **bootstrap_intervals(per_row, bootstrap, seed)},
    }
