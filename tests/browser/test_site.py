"""`express site` as a researcher's readers see it, in real Chromium with the network cut: two
releases (the demo's two months), baselines scored with a knowledge cutoff inside the first month.
The leaderboard's numbers on the page are `express leaderboard --format json`'s; the chart and each
model's cutoff mark are found on a screenshot; the page asks nothing of the network."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from PIL import Image

from flows.cli import main

pytestmark = pytest.mark.slow  # a browser and two demo releases (tests/conftest.py)

CUTOFFS = {"most-frequent": "2024-01-12", "context-lexicon": "2024-01-22"}  # each model its own


@pytest.fixture(scope="module")
def site(two_releases, tmp_path_factory):
    root = tmp_path_factory.mktemp("site") / "wh"
    shutil.copytree(two_releases[0], root, ignore=shutil.ignore_patterns("evaluations"))
    wh = ["--warehouse", str(root)]
    for predictor, cutoff in CUTOFFS.items():
        assert main(["evaluate", "--release", "express-demo/v2", "--predictor", predictor, "--cutoff", cutoff,
                     "--cutoff-min-rows", "5", *wh]) == 0
    out = root.parent / "site"
    assert main(["site", "--out", str(out), *wh]) == 0
    return root, out


def _board(capsys, root, *window: str) -> list[dict]:
    capsys.readouterr()
    assert main(["leaderboard", "--release", "express-demo/v2", "--format", "json", *window,
                 "--warehouse", str(root)]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_site_shows_each_windows_leaderboard_with_the_leaderboards_own_numbers(site, page, capsys):
    root, out = site
    page.tab.goto((out / "express-demo" / "v2" / "index.html").as_uri())
    boards = page.tab.locator("table.board")
    assert boards.count() == 3  # every row, January, February
    for k, window in enumerate(([], ["--posted-after", "2024-01-01", "--posted-before", "2024-02-01"],
                                ["--posted-after", "2024-02-01", "--posted-before", "2024-03-01"])):
        expected = _board(capsys, root, *window)
        shown = json.loads(page.tab.locator("script.board-data").nth(k).text_content())
        assert shown == expected
        for row in expected:
            cells = boards.nth(k).locator(f'tr[data-run="{row["run"]}"] td').all_inner_texts()
            assert cells[0] == row["predictor"] and int(cells[4]) == row["rows"]
            assert cells[5].split()[0] == f"{row['AccL']:.4f}" and cells[7].split()[0] == f"{row['F1V']:.4f}"
            low, high = row["intervals"]["AccL"]
            assert f"({low:.3f}-{high:.3f})" in cells[5]
            assert cells[10] == row["cutoff"] == CUTOFFS[row["predictor"]]
            assert int(cells[11]) == row["after_cutoff"]["rows"]
    assert page.external == [] and page.errors == []


def test_the_screenshot_shows_the_board_and_the_month_chart_with_each_models_cutoff_marked(site, page):
    _, out = site
    page.tab.goto((out / "express-demo" / "v2" / "index.html").as_uri())
    chart = page.tab.locator("#months ~ svg.chart").first
    assert chart.is_visible()
    marks = chart.locator("[id^=cutoff] path")
    assert marks.count() == len(CUTOFFS)
    shot = Image.open(page.shot("site-v2")).convert("RGB")
    scroll = page.tab.evaluate("() => [window.scrollX, window.scrollY]")
    for k in range(marks.count()):
        box = marks.nth(k).bounding_box()
        colour = marks.nth(k).evaluate("e => getComputedStyle(e).stroke")
        want = tuple(int(c) for c in colour[colour.index("(") + 1:-1].split(","))
        x = round(box["x"] + box["width"] / 2 + scroll[0])
        column = [shot.getpixel((dx, round(y + scroll[1]))) for dx in (x - 1, x, x + 1)
                  for y in range(int(box["y"]), int(box["y"] + box["height"]))]
        painted = sum(max(abs(a - b) for a, b in zip(px, want)) < 40 for px in column)
        assert painted > box["height"] / 4, (k, colour, painted)  # dashed: a good share of the line is painted
    rows = page.tab.locator("table.board").first.locator("tbody tr")
    assert rows.count() == len(CUTOFFS)
    for k in range(rows.count()):  # the table is on the screenshot too: each row's text is painted
        box = rows.nth(k).bounding_box()
        crop = shot.crop((round(box["x"] + scroll[0]), round(box["y"] + scroll[1]),
                          round(box["x"] + box["width"] + scroll[0]), round(box["y"] + box["height"] + scroll[1])))
        assert (np.asarray(crop).max(axis=2) < 100).sum() > 200, k  # dark text pixels, not an empty band
    assert page.external == []


def test_the_index_lists_the_releases_and_links_reports_and_runs_that_open_offline(site, page):
    _, out = site
    page.tab.goto((out / "index.html").as_uri())
    assert page.tab.locator("table.releases tbody tr").count() == 2
    page.tab.locator("a", has_text="leaderboard").last.click()
    run = page.tab.locator("table.board a").first
    name = run.inner_text()
    run.click()
    assert name in page.tab.title() and page.tab.locator("img").count() >= 1  # the report's charts, inlined
    assert all(src.startswith("data:image/png") for src in page.tab.locator("img").evaluate_all("e => e.map(i => i.src)"))
    page.tab.go_back()
    page.tab.locator("a", has_text="data-quality report").click()
    assert "data-quality report" in page.tab.title()
    assert page.external == [] and page.errors == []
