"""The EXPRESS metrics for lm-evaluation-harness, written by `express export lm-eval`.

Beside this file: express_parsing.py and express_metrics.py (copies of express's own parser and
metrics, so an answer scores here exactly as `express score` scores it), decomposition.csv (the
10-dim emotion vectors) and data/<split>.jsonl (the masked texts, their prompts and gold words).
AccL and AccV divide by all masks, F1V by the masks of valid rows, VRate by rows, as in the paper.
"""
from __future__ import annotations

import csv
import functools
import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _sibling(name: str):
    """A module of this folder (lm-eval loads this file by path, not from sys.path)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


score_row = _sibling("express_metrics").score_row
parse_answer = _sibling("express_parsing").parse_answer
DIMS = ("anger", "anticipation", "disgust", "fear", "joy", "sadness", "surprise", "trust", "positive", "negative")
ZERO = (0,) * len(DIMS)


class Decomposition:
    """Word -> 10-dim 0/1 vector; a word not in the table gets the all-zero vector."""

    def __init__(self, path: Path) -> None:
        with open(path, encoding="utf-8", newline="") as fh:
            self.vectors = {row["word"].strip().lower(): tuple(int(float(row[d])) for d in DIMS)
                            for row in csv.DictReader(fh)}

    def vector(self, word: str) -> tuple[int, ...]:
        return self.vectors.get(word.strip().lower(), ZERO)


@functools.cache
def decomposition() -> Decomposition:
    return Decomposition(HERE / "decomposition.csv")


def load_docs(**kwargs):
    """The exported splits as a datasets.DatasetDict (lm-eval's `custom_dataset`)."""
    import datasets

    splits = {}
    for path in sorted((HERE / "data").glob("*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            splits[path.stem] = datasets.Dataset.from_list([json.loads(line) for line in fh if line.strip()])
    return datasets.DatasetDict(splits)


def doc_to_text(doc: dict) -> str:
    return doc["prompt"]


def doc_to_target(doc: dict) -> str:
    return repr(list(doc["surfaces"]))


def process_results(doc: dict, results: list[str]) -> dict:
    s = score_row(list(doc["surfaces"]), parse_answer(results[0]), decomposition())
    valid_masks = s.masks if s.valid else 0
    return {"AccL": (s.word_hits, s.masks), "AccV": (s.vector_hits, s.masks), "F1V": (s.f1_sum, valid_masks),
            "VRate": float(s.valid)}


def share(pairs: list[tuple[float, int]]) -> float:
    """Sum of the numerators over sum of the denominators (masks), not a mean of per-row shares."""
    den = sum(d for _, d in pairs)
    return sum(n for n, _ in pairs) / den if den else 0.0
