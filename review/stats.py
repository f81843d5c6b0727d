"""Reviewed precision of the extractor: overall and per pattern, rule and label, with Wilson 95 %
intervals; agreement (Cohen's kappa per pair, Fleiss' kappa) when several people reviewed.

Each item counts once, with the reviewers' consensus (ledger.consensus); precision is
accepted / (accepted + rejected) over the items with a verdict.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import asdict, dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from common.agreement import cohen_kappa, fleiss_kappa
from review.ledger import VERDICTS, Entry, Ledger, consensus, datasets_with_reviews, latest_by_reviewer
from warehouse.layout import Warehouse

Z95 = 1.959963984540054  # two-sided 95 % normal quantile


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for k successes out of n (0, 1 when n == 0)."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Precision:
    reviewed: int
    accepted: int
    rejected: int
    precision: float | None
    low: float
    high: float

    @classmethod
    def of(cls, verdicts: list[str]) -> "Precision":
        acc, rej = verdicts.count("accept"), verdicts.count("reject")
        n = acc + rej
        low, high = wilson(acc, n)
        return cls(n, acc, rej, acc / n if n else None, low, high)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        if self.precision is None:
            return "n/a (nothing reviewed)"
        return f"{self.precision:.3f} [{self.low:.3f}, {self.high:.3f}] ({self.accepted}/{self.reviewed})"


def dataset_stats(root: Path, dataset: str, item_ids: set[str] | None = None,
                  version: int | None = None) -> dict[str, Any]:
    """Stats of one dataset's ledger (restricted to `item_ids`, e.g. the items of one release)."""
    ledger = Ledger(root, dataset)
    version = ledger.version if version is None else version
    standing = latest_by_reviewer(ledger.read(version))
    if item_ids is not None:
        standing = {k: v for k, v in standing.items() if k in item_ids}
    items: dict[str, tuple[Entry, str]] = {}
    for item_id, per in standing.items():
        verdict = consensus(per)
        if verdict is not None:
            items[item_id] = (next(iter(per.values())), verdict)
    out: dict[str, Any] = {"dataset": dataset, "ledger_version": version, "ledger_sha256": ledger.sha256(version),
                           "overall": Precision.of([v for _, v in items.values()]).to_json()}
    for key in ("pattern", "rule", "label"):
        groups: dict[str, list[str]] = defaultdict(list)
        for e, v in items.values():
            groups[getattr(e, key) or "(none)"].append(v)
        out[f"by_{key}"] = {g: Precision.of(vs).to_json() for g, vs in sorted(groups.items())}
    ratings = _ratings(standing)
    out["reviewers"] = {r: {**Precision.of(list(v.values())).to_json(),
                            "skipped": sum(1 for per in standing.values() if r in per and per[r].decision == "skip")}
                        for r, v in sorted(ratings.items())}
    out["agreement"] = agreement(ratings) if len(ratings) >= 2 else None
    return out


def _ratings(standing: dict[str, dict[str, Entry]]) -> dict[str, dict[str, str]]:
    """reviewer -> item_id -> accept/reject (skips left out)."""
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for item_id, per in standing.items():
        for reviewer, e in per.items():
            if e.decision in VERDICTS:
                out[reviewer][item_id] = e.decision
    return dict(out)


def agreement(ratings: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Cohen's kappa for each pair on the items both rated; Fleiss' kappa on the items all rated."""
    names = sorted(ratings)
    pairs = []
    for a, b in combinations(names, 2):
        shared = sorted(set(ratings[a]) & set(ratings[b]))
        pairs.append({"a": a, "b": b, "items": len(shared),
                      "agreement": sum(ratings[a][x] == ratings[b][x] for x in shared) / len(shared) if shared else None,
                      "cohen_kappa": cohen_kappa([ratings[a][x] for x in shared], [ratings[b][x] for x in shared])
                      if shared else None})
    common = sorted(set.intersection(*(set(r) for r in ratings.values())))
    table = [[sum(ratings[r][x] == c for r in names) for c in VERDICTS] for x in common]
    return {"reviewers": names, "pairs": pairs, "fleiss_items": len(common),
            "fleiss_kappa": fleiss_kappa(table) if table else None}


def review_stats(root: Path, release: Any | None = None) -> list[dict[str, Any]]:
    """Stats per reviewed dataset; with a release, only that dataset and the items of that release."""
    if release is not None:
        from review.items import release_items

        ids = {it.item_id for it in release_items(release, root).items}
        if not Ledger(root, release.dataset).version:
            return []
        return [{**dataset_stats(root, release.dataset, ids), "release": f"{release.dataset}/{release.version}"}]
    return [dataset_stats(root, name) for name in datasets_with_reviews(root)]


def release_review(release: Any) -> dict[str, Any] | None:
    """Reviewed precision of a release for its report and card, or None when none of its masks was
    reviewed."""
    root = Warehouse.of_release(release.path).root
    if not Ledger(root, release.dataset).version:
        return None
    found = review_stats(root, release)
    return found[0] if found and found[0]["overall"]["reviewed"] else None


def format_stats(stats: dict[str, Any]) -> str:
    o = Precision(**stats["overall"])
    lines = [f"{stats.get('release') or stats['dataset']}: ledger v{stats['ledger_version']} "
             f"(sha256 {stats['ledger_sha256'][:12]})",
             f"reviewed precision {o.text()}  (Wilson 95 % interval)"]
    for key in ("pattern", "rule", "label"):
        lines.append(f"  by {key}:")
        for name, p in stats[f"by_{key}"].items():
            lines.append(f"    {name:<44} {Precision(**p).text()}")
    lines.append("  reviewers:")
    for name, p in stats["reviewers"].items():
        lines.append(f"    {name:<20} {Precision(**{k: v for k, v in p.items() if k != 'skipped'}).text()}"
                     f"  skipped {p['skipped']}")
    ag = stats.get("agreement")
    if ag:
        for pair in ag["pairs"]:
            kappa = "n/a" if pair["cohen_kappa"] is None else f"{pair['cohen_kappa']:.3f}"
            lines.append(f"  Cohen's kappa {pair['a']} vs {pair['b']}: {kappa} on {pair['items']} shared items")
        fk = "n/a" if ag["fleiss_kappa"] is None else f"{ag['fleiss_kappa']:.3f}"
        lines.append(f"  Fleiss' kappa: {fk} on {ag['fleiss_items']} items all {len(ag['reviewers'])} reviewers rated")
    return "\n".join(lines)
