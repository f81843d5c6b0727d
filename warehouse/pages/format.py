"""Human formatting and the HTML pieces of the data-quality report.

Every value reaches the page through one of these functions; they take numbers and strings only
and refuse anything else (None, dicts, lists), so no Python or JSON repr can leak into the page.
"""
from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone

DASH = "–"  # en dash, for ranges and missing values


class Markup(str):
    """HTML that is already safe to put in the page."""


def text(value: str | int | float) -> Markup:
    """A value as escaped page text."""
    if isinstance(value, Markup):
        return value
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise TypeError(f"the report formats strings and numbers only, not {type(value).__name__}")
    if isinstance(value, float):
        return Markup(dec(value))
    if isinstance(value, int):
        return Markup(num(value))
    return Markup(html.escape(value))


def num(n: int | float) -> str:
    """A count with thousands separators: 12,345."""
    _number(n)
    return f"{round(n):,}"


def dec(x: float, digits: int = 2) -> str:
    """A decimal number: 1.56, 1,234.5."""
    _number(x)
    return f"{x:,.{digits}f}"


def pct(x: float, digits: int = 1) -> str:
    """A share as a percentage: 0.123 gives 12.3%."""
    _number(x)
    return f"{x:.{digits}%}"


def signed(n: int | float, digits: int = 0) -> str:
    """A change with its sign: +1,234, -5, ±0."""
    _number(n)
    if round(n, digits) == 0:
        return "±0"
    return f"{n:+,.{digits}f}"


def signed_pct(x: float, digits: int = 1, points: bool = False) -> str:
    """A change of a share: +1.2% (or +1.2 pp for a difference of two shares)."""
    _number(x)
    if round(x * 100, digits) == 0:
        return "±0" + (" pp" if points else "%")
    return f"{x * 100:+.{digits}f}" + (" pp" if points else "%")


def change(a: int | float, b: int | float, digits: int = 0) -> str:
    """The change from a to b: +179 (+10.8%)."""
    d = b - a
    if not a or round(d, digits) == 0:
        return signed(d, digits)
    return f"{signed(d, digits)} ({signed_pct(d / a)})"


def date(iso: str) -> str:
    """An ISO timestamp as 4 December 2026, 15:22 UTC."""
    try:
        t = datetime.fromisoformat(iso).astimezone(timezone.utc)
    except (TypeError, ValueError):
        return DASH
    return f"{t.day} {t:%B %Y, %H:%M} UTC"


def month(ts: int) -> str:
    """Unix seconds as a month: January 2024."""
    return f"{datetime.fromtimestamp(ts, timezone.utc):%B %Y}"


def span(first: int, last: int) -> str:
    a, b = month(first), month(last)
    return a if a == b else f"{a} {DASH} {b}"


def _number(x: int | float) -> None:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or (isinstance(x, float) and not math.isfinite(x)):
        raise TypeError(f"not a finite number: {x!r}")


def tag(name: str, body: str | Iterable[str] = "", **attrs: str | int) -> Markup:
    """<name attrs>body</name>; attribute names take `_` for `-` and `cls` for `class`."""
    parts = "".join(f' {_attr(k)}="{html.escape(str(v))}"' for k, v in attrs.items() if v is not None)
    inner = body if isinstance(body, str) else "".join(body)
    return Markup(f"<{name}{parts}>{inner}</{name}>")


def _attr(key: str) -> str:
    return "class" if key == "cls" else key.rstrip("_").replace("_", "-")


def table(head: Sequence[str], rows: Iterable[Sequence[str | int | float]], cls: str = "", id: str = "",
          numeric: Sequence[int] = ()) -> Markup:
    """A table; `numeric`: the column indexes to right-align."""
    th = "".join(tag("th", text(h), cls="n" if i in numeric else None) for i, h in enumerate(head))
    body = "".join(tag("tr", (tag("td", text(c), cls="n" if i in numeric else None) for i, c in enumerate(r)))
                   for r in rows)
    return tag("table", tag("thead", tag("tr", th)) + tag("tbody", body), cls=cls or None, id=id or None)


def details(summary: str, body: str, id: str = "") -> Markup:
    """A table or list collapsed behind a toggle."""
    return tag("details", tag("summary", text(summary)) + body, id=id or None)


def section(id: str, title: str, question: str, body: Iterable[str]) -> Markup:
    """A section a reader can jump to: its title, the question it answers, its content."""
    return tag("section", [tag("h2", text(title), id=id), tag("p", text(question), cls="question"), *body])


def chips(words: Iterable[str], cls: str) -> Markup:
    return Markup(" ".join(tag("span", text(w), cls=f"chip {cls}") for w in words))
