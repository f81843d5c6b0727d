"""A predictor that cheats as hard as a plugin can: it searches everything it is handed for the gold
words, and answers with what it finds ("<none>" otherwise).

It walks every object it can reach from its inputs and options (attributes, slots, dict keys and
values, sequence items, pickled state, repr and str) and recovers answers three ways: a reachable
string that is the unmasked text (it fills the masked text's template), a reachable list of
exactly n_masks strings, or a training example of the same post or text remembered from `fit`.
Loaded by the tests as `--predictor tests.evaluation.cheating:Cheater`.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

MASK = "<mask>"
MAX_DEPTH = 5
_ATOMS = (str, bytes, int, float, bool, type(None))


def reachable(obj: Any, path: str = "x", depth: int = 0, seen: set[int] | None = None) -> Iterator[tuple[str, Any]]:
    """(path, value) for `obj` and everything reachable from it."""
    seen = set() if seen is None else seen
    if depth > MAX_DEPTH or (not isinstance(obj, _ATOMS) and id(obj) in seen):
        return
    seen.add(id(obj))
    yield path, obj
    if isinstance(obj, _ATOMS):
        return
    for label, text in (("repr", repr), ("str", str)):
        try:
            yield f"{path}.<{label}>", text(obj)
        except Exception:
            pass
    if isinstance(obj, dict):
        for k, v in list(obj.items()):
            yield f"{path}.<key>", k
            yield from reachable(v, f"{path}[{k!r}]", depth + 1, seen)
        return
    if isinstance(obj, (list, tuple, set, frozenset)):
        for i, v in enumerate(obj):
            yield from reachable(v, f"{path}[{i}]", depth + 1, seen)
        return
    try:
        state = obj.__reduce_ex__(4)  # what pickling would carry
    except Exception:
        state = None
    if isinstance(state, tuple):
        yield from reachable(list(state[1:3]), f"{path}.<reduce>", depth + 1, seen)
    names = set(dir(obj)) | set(getattr(obj, "__dict__", {}) or {}) | set(getattr(type(obj), "__slots__", ()) or ())
    for name in sorted(names):
        if name.startswith("__"):
            continue
        try:
            value = getattr(obj, name)
        except Exception:
            continue
        if callable(value) and not isinstance(value, (list, dict, tuple)):
            continue
        yield from reachable(value, f"{path}.{name}", depth + 1, seen)


def template(masked_text: str) -> re.Pattern[str]:
    return re.compile("(?s)" + "(.+?)".join(re.escape(part) for part in masked_text.split(MASK)))


def recover(masked_text: str, n: int, values: list[tuple[str, Any]]) -> tuple[list[str], str] | None:
    """Gold words from the reachable values, and where they were found."""
    pattern = template(masked_text)
    for path, value in values:  # the unmasked text, anywhere (also inside a repr)
        if isinstance(value, str) and MASK not in value and n and (m := pattern.search(value)):
            return [g.strip() for g in m.groups()], path
    for path, value in values:  # a list of exactly n words
        if isinstance(value, (list, tuple)) and n and len(value) == n and all(isinstance(v, str) for v in value) \
                and not any(MASK in v for v in value):
            return list(value), path
    return None


class Cheater:
    name = "cheater"
    uses_prompts = False

    def __init__(self, options: Any) -> None:
        self.options = options
        self.memory: dict[str, list[str]] = {}
        self.fit_posts: list[str] = []
        self.found: Counter[str] = Counter()
        self.item_fields: set[str] = set()
        self.item_types: set[str] = set()
        self.predicted = 0

    def fit(self, train: Iterable[Any]) -> None:
        for t in train:
            values = list(reachable(t))
            hit = recover(t.masked_text, t.masked_text.count(MASK), values)
            if hit is not None:  # training data may carry its answers: remember them by post and text
                self.memory[f"post:{t.post_id}"] = hit[0]
                self.memory[f"text:{t.masked_text}"] = hit[0]
            self.fit_posts.append(t.post_id)

    def answer(self, item: Any) -> list[str]:
        values = list(reachable(item, "item")) + list(reachable(self.options, "options"))
        self.item_fields |= {p.split(".")[1] for p, _ in values
                             if p.startswith("item.") and p.count(".") == 1 and "<" not in p}
        self.item_types.add(type(item).__name__)
        text = item["masked_text"] if isinstance(item, dict) else item.masked_text
        post = item["post_id"] if isinstance(item, dict) else item.post_id
        n = text.count(MASK)
        hit = recover(text, n, values)
        if hit is not None:
            self.found["input:" + hit[1].split("[")[0].split(".<")[0]] += 1
            return hit[0]
        for key in (f"post:{post}", f"text:{text}"):
            if key in self.memory and len(self.memory[key]) == n:
                self.found["fit"] += 1
                return self.memory[key]
        return ["<none>"] * n

    def predict_many(self, items: list[Any]) -> list[str]:
        out = []
        for item in items:
            self.predicted += 1
            out.append(repr(self.answer(item)))
        return out

    def describe(self) -> dict[str, Any]:
        return {"found": dict(self.found), "item_fields": sorted(self.item_fields), "item_types": sorted(self.item_types),
                "fit_posts": sorted(set(self.fit_posts)), "predicted": self.predicted}
