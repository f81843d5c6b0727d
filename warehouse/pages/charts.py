"""The report's charts: matplotlib drawn to inline SVG, with text kept as text (small, sharp at any
zoom, readable by a screen reader or a test). One chart answers one question; each series is a
release (or EXPRESS), always in the same colour."""
from __future__ import annotations

import io
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from warehouse.pages.format import Markup

PARENT, RELEASE, EXPRESS = "#a3acb9", "#2f6db5", "#d9822b"
Series = tuple[str, Sequence[float], str]  # name, values, colour


@lru_cache(maxsize=1)
def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({
        "svg.fonttype": "none", "svg.hashsalt": "express-report", "font.size": 9,
        "font.family": "sans-serif", "axes.spines.top": False, "axes.spines.right": False,
        "axes.edgecolor": "#889", "axes.titlesize": 10, "axes.titleweight": "bold", "axes.titlelocation": "left",
        "xtick.color": "#445", "ytick.color": "#445", "axes.axisbelow": True, "grid.color": "#e3e6ea",
        "legend.frameon": False, "legend.fontsize": 8.5})
    return plt


def _svg(fig: Any, label: str) -> Markup:
    plt = _pyplot()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    # drawn at its natural size (so every chart's text has one size), shrunk to fit a narrow page
    svg = re.sub(r'<svg([^>]*?) width="([\d.]+)pt" height="([\d.]+)pt"',
                 lambda m: f'<svg{m[1]} width="{float(m[2]) * 4 / 3:.0f}" height="{float(m[3]) * 4 / 3:.0f}"',
                 svg, count=1)
    svg = svg.replace("<svg", f'<svg role="img" aria-label="{label}" class="chart"', 1)
    return Markup(svg)


def _percent_axis(axis: Any) -> None:
    """Shares as percentages, with as many decimals as the tick step needs (1%, 0.5%, 0.25%)."""
    import math

    from matplotlib.ticker import PercentFormatter

    ticks = axis.get_majorticklocs()
    step = (ticks[1] - ticks[0]) * 100 if len(ticks) > 1 else 1.0
    decimals = 0
    while decimals < 3 and abs(step * 10 ** decimals - round(step * 10 ** decimals)) > 1e-6:
        decimals += 1
    axis.set_major_formatter(PercentFormatter(1.0, decimals=decimals if math.isfinite(step) else 0))


def grouped_hbar(categories: Sequence[str], series: Sequence[Series], title: str, width: float = 6.2,
                 share: bool = True) -> Markup:
    """Horizontal bars, one group per category (top to bottom), one bar per series."""
    plt = _pyplot()
    n, k = len(categories), len(series)
    fig, ax = plt.subplots(figsize=(width, 0.5 + (0.16 * k + 0.1) * max(n, 1)), layout="constrained")
    h = 0.8 / k
    for j, (name, values, colour) in enumerate(series):
        ys = [i + (j - (k - 1) / 2) * h for i in range(n)]
        ax.barh(ys, values, height=h, color=colour, label=name)
    ax.set_yticks(range(n), list(categories))
    ax.invert_yaxis()
    ax.set_ylim(n - 0.5, -0.5)
    ax.grid(axis="x")
    if share:
        _percent_axis(ax.xaxis)
    ax.set_title(title)
    if k > 1:
        ax.legend(loc="lower right")
    return _svg(fig, title)


def grouped_columns(categories: Sequence[str], series: Sequence[Series], title: str, xlabel: str,
                    width: float = 4.6) -> Markup:
    """Columns, one group per category (left to right), one column per series; values are shares."""
    plt = _pyplot()
    n, k = len(categories), len(series)
    fig, ax = plt.subplots(figsize=(width, 2.7), layout="constrained")
    w = 0.8 / k
    for j, (name, values, colour) in enumerate(series):
        ax.bar([i + (j - (k - 1) / 2) * w for i in range(n)], values, width=w, color=colour, label=name)
    ax.set_xticks(range(n), list(categories))
    ax.set_xlabel(xlabel)
    ax.grid(axis="y")
    _percent_axis(ax.yaxis)
    ax.set_title(title)
    if k > 1:
        ax.legend()
    return _svg(fig, title)


def overlaid_histograms(tables: Sequence[tuple[str, dict[int, int], str]], title: str, xlabel: str,
                        marks: Sequence[tuple[float, str]] = (), width: float = 4.6, bins: int = 30) -> Markup:
    """Distributions of a count (value -> how often) as step histograms of shares on common bins;
    `marks`: vertical reference lines (value, label)."""
    plt = _pyplot()
    values = [v for _, t, _ in tables for v in t]
    lo, hi = (min(values), max(values)) if values else (0, 1)
    for v, _ in marks:
        lo, hi = min(lo, int(v)), max(hi, int(v) + 1)
    step = max(1, -(-(hi - lo + 1) // bins))
    edges = [lo + i * step for i in range(-(-(hi - lo + 1) // step) + 1)]
    fig, ax = plt.subplots(figsize=(width, 2.7), layout="constrained")
    for name, table, colour in tables:
        total = sum(table.values()) or 1
        shares = [0.0] * (len(edges) - 1)
        for v, c in table.items():
            shares[min((v - lo) // step, len(shares) - 1)] += c / total
        ax.stairs(shares, edges, color=colour, fill=colour == PARENT, alpha=0.55 if colour == PARENT else 1,
                  linewidth=1.8, label=name)
    for v, label in marks:
        ax.axvline(v, color=EXPRESS, linestyle="--", linewidth=1)
        ax.annotate(label, (v, 1), xycoords=("data", "axes fraction"), rotation=90, va="top", ha="right",
                    fontsize=7.5, color=EXPRESS)
    ax.set_xlabel(xlabel)
    ax.grid(axis="y")
    _percent_axis(ax.yaxis)
    ax.set_title(title)
    ax.legend()
    return _svg(fig, title)
