"""Training the acceptance model on dev gold (and, when there are any, on review decisions).

Every hit of the rules on a dev segment is labelled by whether gold masks that exact span
(negated hits too: gold masks them). The model is a scikit-learn logistic regression over the
binary features of `acceptance.hit_features`. Its regularisation and threshold are chosen by
cross-validation *inside* the training data (folds of posts), and the model shipped is the
average of those fold models (the ones whose out-of-fold probabilities set the threshold).
So a figure measured on held-out rows never saw them: `cross_fold` trains on fold A and tests
on fold B of `extractors.quality.fold_of`, and the other way round. The threshold is the highest
one that keeps MIN_RETENTION of the true hits out of fold.
"""
from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common.files import write_atomic, write_json
from common.jsonl import parse_jsonl, read_jsonl
from extractors.acceptance import FEATURE_SET, OPEN_PREFIXES, AcceptanceModel, model_from_dict
from extractors.quality import SpanScore, fold_of

if TYPE_CHECKING:
    from extractors.disclosures import DisclosureExtractor

# The share of the true hits the threshold keeps out of fold: the setting at which models trained
# as this module trains, on 80 % of dev's posts, keep #52's recall on the rest
# (`bench/extract.py --retention`; its figures, and how they grow with the share, in bench/README.md).
MIN_RETENTION = 0.984
C_GRID = (0.1, 0.3, 1.0, 3.0)  # inverse L2 strength; chosen out of fold
MIN_POSTS = 3  # an open-vocabulary feature (acceptance.OPEN_PREFIXES) must occur in this many posts
INNER_FOLDS = 5
DEV_NAME = "segments_dev.jsonl"


class TrainingDataError(ValueError):
    """A training file that must not or cannot be used; the message names the file (and line)."""


@dataclass(frozen=True)
class LabelledHit:
    post_id: str
    features: tuple[str, ...]
    gold: bool


@dataclass(frozen=True)
class TrainingSet:
    """Labelled hits, and per post its (rows, gold spans): recall's denominator counts the gold
    spans no hit reached."""

    hits: list[LabelledHit]
    posts: dict[str, tuple[int, int]]
    sha256: str = ""
    source: str = ""
    extra: list[tuple[tuple[str, ...], bool]] = field(default_factory=list)  # review decisions

    @property
    def gold_spans(self) -> int:
        return sum(g for _, g in self.posts.values())

    @property
    def rows(self) -> int:
        return sum(r for r, _ in self.posts.values())

    def pruned(self, min_posts: int = MIN_POSTS) -> "TrainingSet":
        """Without the open-vocabulary features of fewer than min_posts posts (labels unused)."""
        posts: dict[str, set[str]] = {}
        for h in self.hits:
            for f in h.features:
                if f.startswith(OPEN_PREFIXES):
                    posts.setdefault(f, set()).add(h.post_id)
        rare = {f for f, ps in posts.items() if len(ps) < min_posts}
        return replace(self, hits=[replace(h, features=tuple(f for f in h.features if f not in rare))
                                   for h in self.hits])

    def fold(self, name: str) -> "TrainingSet":
        """The rows of fold `name` (A or B) of `fold_of`."""
        return self.of_posts({p for p in self.posts if fold_of(p) == name})

    def of_posts(self, keep: set[str]) -> "TrainingSet":
        """The rows of the posts in `keep`."""
        return replace(self, hits=[h for h in self.hits if h.post_id in keep],
                       posts={p: v for p, v in self.posts.items() if p in keep})


def read_dev(path: str | Path) -> tuple[list[dict[str, Any]], str]:
    """Rows of a dev file and its sha256. Only the dev file (or our own fixtures) may train:
    a file named like a test or hidden split is refused."""
    p = Path(path)
    low = p.name.lower()
    if "test" in low or "hidden" in low:
        raise TrainingDataError(f"{p}: refusing to train on a test/hidden split (only {DEV_NAME} or fixtures)")
    rows = []
    digest = hashlib.sha256()
    def hashed(fh: Iterable[bytes]) -> Iterator[bytes]:  # the training data's sha256, in the same read
        for raw in fh:
            digest.update(raw)
            yield raw

    with open(p, "rb") as fh:
        for line_no, row in parse_jsonl(hashed(fh), p, TrainingDataError):
            if not (isinstance(row.get("text"), str) and "post_id" in row
                    and isinstance(row.get("gold_spans"), list)
                    and all(isinstance(g, dict) and isinstance(g.get("start"), int) and isinstance(g.get("end"), int)
                            for g in row["gold_spans"])):
                raise TrainingDataError(f"{p}:{line_no}: needs 'post_id', a string 'text' and 'gold_spans' "
                                        "({start, end} each)")
            rows.append(row)
    return rows, digest.hexdigest()


def read_review(path: str | Path) -> list[tuple[tuple[str, ...], bool]]:
    """Review decisions as (features, accepted) rows: JSONL of {"features": [...], "accepted": bool}
    (the features of `acceptance.hit_features`, as `DisclosureExtractor.candidates` gives them)."""
    p = Path(path)
    out = []
    for line_no, row in read_jsonl(p, TrainingDataError):
        feats, ok = row.get("features"), row.get("accepted")
        if not (isinstance(feats, list) and all(isinstance(f, str) for f in feats) and isinstance(ok, bool)):
            raise TrainingDataError(f"{p}:{line_no}: needs 'features' (list of strings) and 'accepted' (bool)")
        out.append((tuple(feats), ok))
    return out


def labelled_hits(rows: Sequence[dict[str, Any]], extractor: DisclosureExtractor, sha256: str = "",
                  source: str = "") -> TrainingSet:
    """Every hit of `extractor`'s rules on the rows, labelled by gold (extractor's model is ignored)."""
    hits: list[LabelledHit] = []
    posts: dict[str, tuple[int, int]] = {}
    for row, found in zip(rows, extractor.candidates((r["text"] for r in rows), features=True)):
        post = str(row["post_id"])
        gold = {(s["start"], s["end"]) for s in row["gold_spans"]}
        n_rows, n_gold = posts.get(post, (0, 0))
        posts[post] = (n_rows + 1, n_gold + len(gold))
        for c in found:
            hits.append(LabelledHit(post, c.features, (c.disclosure.start, c.disclosure.end) in gold))
    return TrainingSet(hits, posts, sha256, source).pruned()


def fit(features: Sequence[Sequence[str]], labels: Sequence[bool], c: float) -> tuple[dict[str, float], float]:
    """Logistic-regression weights per feature name (binary features), and the intercept."""
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    vec = DictVectorizer(sparse=True)
    x = vec.fit_transform([dict.fromkeys(fs, 1.0) for fs in features])
    y = [int(bool(v)) for v in labels]
    if len(set(y)) < 2:  # one class only: nothing to learn, keep everything
        return {}, 10.0 if (y and y[0]) else -10.0
    clf = LogisticRegression(C=c, max_iter=5000)
    clf.fit(x, y)
    names = vec.get_feature_names_out()
    return {str(n): float(w) for n, w in zip(names, clf.coef_[0]) if w != 0.0}, float(clf.intercept_[0])


def _model(weights: dict[str, float], intercept: float, threshold: float = 0.5) -> AcceptanceModel:
    return AcceptanceModel("unsaved", weights, intercept, threshold)


def bagged(ts: TrainingSet, c: float,
           folds: int = INNER_FOLDS) -> tuple[list[float], dict[str, float], float]:
    """Out-of-fold probability of each hit (GroupKFold over posts), and the average of the fold
    models (weights, intercept): the model whose threshold those probabilities choose."""
    from sklearn.model_selection import GroupKFold

    groups = [h.post_id for h in ts.hits]
    n = min(folds, len(set(groups)))
    if n < 2:
        w, b = fit([h.features for h in ts.hits] + [f for f, _ in ts.extra],
                   [h.gold for h in ts.hits] + [a for _, a in ts.extra], c)
        return [1.0] * len(ts.hits), w, b
    probs = [1.0] * len(ts.hits)
    weights: dict[str, float] = {}
    intercept = 0.0
    for train, test in GroupKFold(n_splits=n).split(ts.hits, groups=groups):
        feats = [ts.hits[i].features for i in train] + [f for f, _ in ts.extra]
        labels = [ts.hits[i].gold for i in train] + [a for _, a in ts.extra]
        w, b = fit(feats, labels, c)
        m = _model(w, b)
        for i in test:
            probs[i] = m.probability(ts.hits[i].features)
        for f, v in w.items():
            weights[f] = weights.get(f, 0.0) + v / n
        intercept += b / n
    return probs, weights, intercept


def score_at(hits: Sequence[LabelledHit], probs: Sequence[float], threshold: float, gold_spans: int) -> SpanScore:
    """Span scores of the hits whose probability reaches the threshold."""
    tp = sum(1 for h, p in zip(hits, probs) if p >= threshold and h.gold)
    fp = sum(1 for h, p in zip(hits, probs) if p >= threshold and not h.gold)
    return SpanScore(tp, fp, gold_spans - tp)


def choose_threshold(hits: Sequence[LabelledHit], probs: Sequence[float],
                     min_retention: float = MIN_RETENTION) -> float:
    """The highest threshold that still keeps min_retention of the hits gold has (0.0: all)."""
    need = min_retention * sum(h.gold for h in hits)
    tp = 0
    # walk down the probabilities: the threshold is the probability of the hit that reaches `need`
    for p, gold in sorted(((p, h.gold) for h, p in zip(hits, probs)), key=lambda t: -t[0]):
        tp += gold
        if tp >= need:
            return p
    return 0.0


def select(ts: TrainingSet, grid: Sequence[float] = C_GRID,
           min_retention: float = MIN_RETENTION) -> dict[str, Any]:
    """The C of the best out-of-fold precision at min_retention: its threshold, out-of-fold
    figures and averaged fold model."""
    best: dict[str, Any] | None = None
    for c in grid:
        probs, weights, intercept = bagged(ts, c)
        t = choose_threshold(ts.hits, probs, min_retention)
        s = score_at(ts.hits, probs, t, ts.gold_spans)
        if best is None or s.precision > best["inner"]["precision"] + 1e-9:
            best = {"C": c, "threshold": t, "inner": _figures(s), "weights": weights,
                    "intercept": intercept}
    assert best is not None, "empty parameter grid"
    return best


def train(ts: TrainingSet, version: str, grid: Sequence[float] = C_GRID,
          min_retention: float = MIN_RETENTION, folds: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON form of a model trained on all of `ts`: parameters and threshold chosen inside
    it, the shipped weights the average of the inner fold models."""
    import sklearn

    grid = list(grid)
    chosen = select(ts, grid, min_retention)
    weights = chosen["weights"]
    names = sorted(f for f, w in weights.items() if round(w, 6) != 0.0)
    return {
        "version": version,
        "feature_set": FEATURE_SET,
        "model": (f"sklearn.linear_model.LogisticRegression (L2), average of {INNER_FOLDS} fold models, "
                  f"scikit-learn {sklearn.__version__}"),
        "C": chosen["C"],
        "threshold": round(chosen["threshold"], 6),
        "min_retention": min_retention,
        "intercept": round(chosen["intercept"], 6),
        "training_data": {"file": Path(ts.source).name if ts.source else "", "sha256": ts.sha256,
                          "rows": ts.rows, "hits": len(ts.hits), "gold_spans": ts.gold_spans,
                          "hits_in_gold": sum(h.gold for h in ts.hits), "review_rows": len(ts.extra)},
        "selection": {"grid": grid, "inner_folds": INNER_FOLDS, "out_of_fold": chosen["inner"]},
        "folds": folds or {},
        "features": names,
        "coefficients": [round(weights[n], 6) for n in names],
    }


def fold_model(ts: TrainingSet, grid: Sequence[float] = C_GRID,
               min_retention: float = MIN_RETENTION) -> AcceptanceModel:
    """A model trained on `ts` alone (for cross-fold figures), choices made inside it."""
    return model_from_dict(train(ts, "fold-model", grid, min_retention))


def cross_fold(ts: TrainingSet, grid: Sequence[float] = C_GRID, min_retention: float = MIN_RETENTION,
               models: dict[str, AcceptanceModel] | None = None) -> dict[str, Any]:
    """Train on one fold (choosing C and threshold inside it), test on the other; both
    ways, plus the two test folds pooled. Figures: rules alone and with the model."""
    out: dict[str, Any] = {}
    pooled = [0] * 6
    for train_fold, test_fold in (("A", "B"), ("B", "A")):
        tr, te = ts.fold(train_fold), ts.fold(test_fold)
        m = fold_model(tr, grid, min_retention)
        if models is not None:  # the fold models, for a caller that extracts with them
            models[train_fold] = m
        probs = [m.probability(h.features) for h in te.hits]
        with_model = score_at(te.hits, probs, m.threshold, te.gold_spans)
        rules = score_at(te.hits, [1.0] * len(te.hits), 0.0, te.gold_spans)
        out[f"train_{train_fold}_test_{test_fold}"] = {
            "C": m.meta["C"], "threshold": m.threshold, "rules": _figures(rules),
            "with_model": _figures(with_model)}
        for k, v in enumerate((rules.tp, rules.fp, rules.fn, with_model.tp, with_model.fp, with_model.fn)):
            pooled[k] += v
    out["pooled"] = {"rules": _figures(SpanScore(*pooled[:3])), "with_model": _figures(SpanScore(*pooled[3:]))}
    return out


def outer_folds(ts: TrainingSet, folds: int, seed: int) -> Iterator[tuple[TrainingSet, TrainingSet]]:
    """(train, test) per fold of a seeded shuffle of the posts: each post is tested once. With 5
    folds a model trains on 80 % of dev, nearer the shipped model's data than a fold_of half."""
    posts = sorted(ts.posts)
    random.Random(seed).shuffle(posts)
    for k in range(folds):
        test = set(posts[k::folds])
        yield ts.of_posts(set(posts) - test), ts.of_posts(test)


def outer_score(ts: TrainingSet, folds: int, seeds: Iterable[int],
                min_retention: float = MIN_RETENTION) -> SpanScore:
    """Span scores, pooled, of models trained as `train` trains on all `outer_folds` but one, each
    scoring the one it did not see, for each seed."""
    tp = fp = fn = 0
    for seed in seeds:
        for train_part, test_part in outer_folds(ts, folds, seed):
            model = fold_model(train_part, min_retention=min_retention)
            s = score_at(test_part.hits, [model.probability(h.features) for h in test_part.hits],
                         model.threshold, test_part.gold_spans)
            tp, fp, fn = tp + s.tp, fp + s.fp, fn + s.fn
    return SpanScore(tp, fp, fn)


def _figures(s: SpanScore) -> dict[str, Any]:
    return {"precision": round(s.precision, 4), "recall": round(s.recall, 4), "tp": s.tp, "fp": s.fp, "fn": s.fn}


_VERSION_HEADER = """\
# The acceptance model that `[extract] acceptance = "on"` loads (extractors/acceptance.py).
# Written by `express train-acceptance`; a new model is a new file with a new version, and
# tests/extractors/test_acceptance.py checks the sha256 against the file.
"""


def next_version(out_dir: Path) -> str:
    """acceptance-v<N+1> for the highest acceptance-v<N>.json in out_dir."""
    taken = [int(p.stem.rsplit("-v", 1)[1]) for p in out_dir.glob("acceptance-v*.json")
             if p.stem.rsplit("-v", 1)[1].isdigit()]
    return f"acceptance-v{max(taken, default=0) + 1}"


def write_model(data: dict[str, Any], out_dir: str | Path, force: bool = False) -> Path:
    """Write `<version>.json` and point out_dir's acceptance.toml at it; an existing version is
    kept unless `force`, so a shipped model never changes under its version."""
    from common.checksums import sha256_file

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{data['version']}.json"
    if path.exists() and not force:
        raise FileExistsError(f"{path} exists: give a new --version (or --force to replace it)")
    write_json(path, data, indent=1, ensure_ascii=False)
    toml = (f'{_VERSION_HEADER}\n[acceptance]\nfile = "{path.name}"\nversion = "{data["version"]}"\n'
            f'sha256 = "{sha256_file(path)}"\n')
    write_atomic(out / "acceptance.toml", toml.encode("utf-8"))
    return path
