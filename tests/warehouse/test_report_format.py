"""The report's formatting: people read thousands separators, percentages and dates, and nothing
but strings and numbers can reach the page (no Python or JSON reprs)."""
import math

import pytest

from warehouse.pages.format import Markup, change, date, details, num, pct, signed, signed_pct, span, table, text


def test_numbers_read_as_people_write_them():
    assert num(1234567) == "1,234,567" and num(0) == "0"
    assert pct(0.1234) == "12.3%" and pct(1.0) == "100.0%" and pct(0.5, 0) == "50%"
    assert signed(179) == "+179" and signed(-5) == "-5" and signed(0) == "±0" and signed(12345) == "+12,345"
    assert signed_pct(0.0123, points=True) == "+1.2 pp" and signed_pct(-0.00001, points=True) == "±0 pp"
    assert change(1655, 1983) == "+328 (+19.8%)" and change(0, 7) == "+7" and change(5, 5) == "±0"


def test_dates_and_months_are_spelled_out_in_utc():
    assert date("2026-12-04T15:22:04+00:00") == "4 December 2026, 15:22 UTC"
    assert date("2026-12-04T16:22:04+01:00") == "4 December 2026, 15:22 UTC"
    assert date("not a date") == "–"
    assert span(1704067200, 1706745599) == "January 2024"  # 1 Jan 2024 .. 31 Jan 2024
    assert span(1704067200, 1709251200) == "January 2024 – March 2024"


@pytest.mark.parametrize("bad", [None, {"train": 1}, ["a"], ("a",), True, math.nan, math.inf])
def test_nothing_but_strings_and_numbers_reaches_the_page(bad):
    with pytest.raises(TypeError):
        text(bad)
    with pytest.raises(TypeError):
        table(["a"], [[bad]])


def test_page_text_is_escaped_and_markup_is_kept():
    assert text("<b> & 'x'") == "&lt;b&gt; &amp; &#x27;x&#x27;"
    assert text(Markup("<b>x</b>")) == "<b>x</b>"
    assert text(12345) == "12,345" and text(1.5) == "1.50"
    t = table(["label", "masks"], [["sad", num(1200)]], id="t", numeric=(1,))
    assert t == ('<table id="t"><thead><tr><th>label</th><th class="n">masks</th></tr></thead>'
                 '<tbody><tr><td>sad</td><td class="n">1,200</td></tr></tbody></table>')
    assert details("Table: 3 labels", t).startswith("<details><summary>Table: 3 labels</summary><table")
