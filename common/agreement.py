"""Agreement coefficients (Cohen's kappa, Fleiss' kappa, Krippendorff's alpha for nominal data),
here so that review stats (warehouse) and rater files (evaluation) share one implementation.
Checked against textbook examples in tests/schemas/test_agreement.py."""
from __future__ import annotations

from collections import Counter, defaultdict


def cohen_kappa(a: list[str], b: list[str]) -> float:
    """(p_o - p_e) / (1 - p_e) for two raters on the same items."""
    n = len(a)
    if n == 0 or n != len(b):
        raise ValueError("cohen_kappa needs two equally long, non-empty rating lists")
    p_o = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    p_e = sum(ca[c] * cb[c] for c in ca) / (n * n)
    return 1.0 if p_e == 1 else (p_o - p_e) / (1 - p_e)


def fleiss_kappa(table: list[list[int]]) -> float:
    """Fleiss' kappa from an items x categories table of counts (same number of raters per item)."""
    if not table:
        raise ValueError("fleiss_kappa needs at least one item")
    n = sum(table[0])
    if n < 2 or any(sum(row) != n for row in table):
        raise ValueError("fleiss_kappa needs the same number (>= 2) of ratings for every item")
    items = len(table)
    p_bar = sum((sum(c * c for c in row) - n) / (n * (n - 1)) for row in table) / items
    p_j = [sum(row[j] for row in table) / (items * n) for j in range(len(table[0]))]
    p_e = sum(p * p for p in p_j)
    return 1.0 if p_e == 1 else (p_bar - p_e) / (1 - p_e)


def krippendorff_alpha_nominal(units: list[list[str]]) -> float:
    """Alpha for nominal data; each unit lists the labels it got (missing ratings simply absent)."""
    coincidence: dict[tuple[str, str], float] = defaultdict(float)
    for values in units:
        m = len(values)
        if m < 2:
            continue  # a unit rated once cannot be paired
        for i, j in ((i, j) for i in range(m) for j in range(m) if i != j):
            coincidence[(values[i], values[j])] += 1 / (m - 1)
    n_c: Counter[str] = Counter()
    for (c, _), v in coincidence.items():
        n_c[c] += v
    n = sum(n_c.values())
    if n <= 1:
        raise ValueError("krippendorff_alpha needs at least one unit rated twice")
    observed = sum(v for (c, k), v in coincidence.items() if c != k)
    expected = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k)
    return 1.0 if expected == 0 else 1 - (n - 1) * observed / expected
