"""A release beside the statistics the EXPRESS paper publishes (schemas/data/express-published.toml),
each comparison with a plain-language note when the release is far from the paper."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from schemas.lexicon import DATA_DIR, data_versions
from warehouse.releases.stats import ReleaseStats


@lru_cache(maxsize=1)
def published() -> dict[str, Any]:
    """The paper's figures, with the file's declared version."""
    entry = data_versions()["published"]
    with open(DATA_DIR / entry["file"], "rb") as fh:
        data = tomllib.load(fh)
    if data.get("version") != entry["version"]:
        raise ValueError(f"{entry['file']}: version {data.get('version')} but versions.toml says {entry['version']}")
    return data


@dataclass(frozen=True)
class Figure:
    """One statistic, the paper's value and the release's, and a note in words (`far`: far apart)."""

    name: str
    paper: float | int
    release: float | int
    kind: str  # "mean", "count", "share", "range"
    note: str = ""
    far: bool = False
    paper_high: int = 0  # the upper end of a range
    release_high: int = 0


@dataclass(frozen=True)
class LabelShare:
    label: str
    paper_count: int
    paper_share: float
    count: int
    share: float
    note: str = ""


@dataclass(frozen=True)
class Comparison:
    version: str
    figures: list[Figure]
    labels: list[LabelShare]


def compare_with_express(stats: ReleaseStats, ref: dict[str, Any] | None = None) -> Comparison:
    """The release's masks per segment, words per segment and shares of the paper's top labels
    (by surface word, as the paper counts them) next to the paper's."""
    ref = ref or published()
    far = ref["far_off"]
    words = stats.words_summary
    mps, wps, ds = ref["masks_per_segment"], ref["words_per_segment"], ref["dataset"]
    figures = [
        _mean("masks per segment", mps["mean"], stats.masks_per_segment, "masks", far, 2),
        _mean("words per segment", wps["mean"], words.mean, "words", far, 0),
        _range("words per segment, shortest to longest", stats.words, wps["min"], wps["max"]),
    ]
    total = stats.total_masks
    top = ref["top_labels"]
    labels = [_label(w, n, ds["masks"], stats.surfaces.get(w, 0), total, far) for w, n in top.items()]
    paper_top = sum(top.values()) / ds["masks"]
    ours_top = sum(stats.surfaces.get(w, 0) for w in top) / total if total else 0.0
    note = _share_note(f"The paper's {len(top)} most frequent words", paper_top, ours_top, far, plural=True)
    figures.append(Figure(f"share of masks whose word is one of the paper's {len(top)} most frequent", paper_top,
                          ours_top, "share", note or "close to EXPRESS", bool(note)))
    small = total < ds["masks"] / 10
    figures.append(Figure("distinct masked words", ds["lexicon_words_seen"], len(stats.surfaces), "count",
                          f"EXPRESS has {ds['masks']:,} masks; {total:,} cannot show all of its long tail" if small
                          else f"EXPRESS: {ds['lexicon_words_seen']} of the {ds['lexicon_words']} lexicon words"))
    figures.append(Figure("segments", ds["segments"], stats.total_rows, "count",
                          f"this release is {stats.total_rows / ds['segments']:.1%} of EXPRESS's size"))
    return Comparison(ref["version"], figures, labels)


def _mean(name: str, paper: float, ours: float, unit: str, far: dict[str, float], digits: int) -> Figure:
    rel = (ours - paper) / paper if paper else 0.0
    if abs(rel) <= far["mean_relative"]:
        return Figure(name, paper, ours, "mean", f"close to EXPRESS ({rel:+.0%})")
    what = {("masks", True): "carry more masks", ("masks", False): "carry fewer masks",
            ("words", True): "are longer", ("words", False): "are shorter"}[unit, ours > paper]
    return Figure(name, paper, ours, "mean", f"Segments here {what} than EXPRESS's: {ours:,.{digits}f} against "
                                             f"{paper:,.{digits}f} {unit} on average ({rel:+.0%}).", True)


def _range(name: str, words: dict[int, int], low: int, high: int) -> Figure:
    n = sum(words.values())
    short = sum(c for w, c in words.items() if w < low)
    long = sum(c for w, c in words.items() if w > high)
    parts = []
    if short:
        parts.append(f"{short:,} ({short / n:.1%}) are shorter than EXPRESS's shortest ({low} words)")
    if long:
        than = "longer than its" if short else "are longer than EXPRESS's"
        parts.append(f"{long:,} ({long / n:.1%}) {than} longest ({high} words)")
    note = f"Of the segments here, {' and '.join(parts)}." if parts else "every segment is within EXPRESS's range"
    return Figure(name, low, min(words, default=0), "range", note, bool(parts), high, max(words, default=0))


def _share_note(subject: str, paper: float, ours: float, far: dict[str, float], plural: bool = False) -> str:
    if abs(ours - paper) < far["share_points"]:
        return ""
    verb = "are" if plural else "is"
    against = f"({ours:.1%} of masks against {paper:.1%})"
    if ours == 0:
        return f"{subject} never occur{'' if plural else 's'} here (EXPRESS: {paper:.1%} of masks)."
    ratio = ours / paper
    if ratio > far["share_ratio"]:
        return f"{subject} {verb} {ratio:.1f} times as frequent here as in EXPRESS {against}."
    if ratio < 1 / far["share_ratio"]:
        return f"{subject} {verb} much rarer here than in EXPRESS {against}."
    if abs(ours - paper) > far["share_gap"]:
        return f"{subject} {verb} {'more frequent' if ours > paper else 'rarer'} here than in EXPRESS {against}."
    return ""


def _label(word: str, paper_count: int, paper_masks: int, count: int, total: int, far: dict[str, float]) -> LabelShare:
    paper_share, share = paper_count / paper_masks, (count / total if total else 0.0)
    return LabelShare(word, paper_count, paper_share, count, share, _share_note(f"“{word}”", paper_share, share, far))
