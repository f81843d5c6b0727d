"""The data-quality report and the GX Data Docs render in real Chromium with the network cut."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows.cli import main
from review.ledger import Ledger
from tests.review.helpers import copy_demo


@pytest.fixture
def reviewed_copy(demo_build, tmp_path, capsys):
    """The demo release with its Data Docs, and 12 of its masks reviewed (9 accepted)."""
    root = tmp_path / "wh"
    rel = copy_demo(demo_build, root, docs=True)
    export = tmp_path / "items.jsonl"
    assert main(["review", "export", "--release", f"{rel.dataset}/{rel.version}", "--warehouse", str(root),
                 "--out", str(export), "--sample", "12"]) == 0
    items = [json.loads(x) for x in export.read_text().splitlines()]
    decisions = tmp_path / "decisions.jsonl"
    decisions.write_text("".join(json.dumps({"item_id": it["item_id"], "decision": "reject" if i < 3 else "accept"})
                                 + "\n" for i, it in enumerate(items)))
    assert main(["review", "import", str(decisions), "--reviewer", "ana", "--warehouse", str(root)]) == 0
    capsys.readouterr()
    return root, rel


def test_report_renders_offline_with_charts_and_reviewed_precision(reviewed_copy, page, capsys):
    root, rel = reviewed_copy
    assert main(["report", "--release", f"{rel.dataset}/{rel.version}", "--warehouse", str(root)]) == 0
    report = Path(capsys.readouterr().out.strip())
    tab = page.tab
    tab.goto(report.as_uri())
    for section in ("changes", "labels", "shape", "express", "examples", "look-first", "privacy", "review", "funnel",
                    "gate", "details"):
        assert tab.is_visible(f"h2#{section}"), section
    charts = tab.eval_on_selector_all("svg.chart", "cs => cs.map(c => c.getBoundingClientRect().width)")
    assert len(charts) == 6 and min(charts) > 200
    masks = sum(rel.manifest()["masks"].values())
    # 9 of 12 accepted: 0.750, Wilson [0.4677, 0.9111]
    assert tab.inner_text("#review-summary") == (
        f"12 of {masks:,} masks reviewed ({12 / masks:.1%}) by 1 reviewer(s), ledger version 1: precision 0.750, "
        "95% Wilson interval 0.468 – 0.911; 9 accepted, 3 rejected.")
    assert tab.inner_text("#band-review .value") == "0.750"
    assert tab.inner_text("#band-review .sub") == "95% interval 0.468 – 0.911, 12 masks reviewed"
    page.shot("report-top", full_page=False)
    tab.evaluate("document.getElementById('review').scrollIntoView()")
    page.shot("report-review", full_page=False)
    tab.click("text=Great Expectations Data Docs")  # the link beside the gate results opens the docs
    tab.wait_for_selector(".bootstrap-table")
    assert tab.url.endswith("gate/data_docs/index.html")
    assert page.external == [] and page.errors == []


def test_data_docs_render_offline_from_shipped_assets(reviewed_copy, page):
    _, rel = reviewed_copy
    docs = rel.path / "gate" / "data_docs"
    offline = json.loads((docs / "OFFLINE.json").read_text())
    assert offline["leftover"] == [] and len(offline["rewritten"]) >= 10
    tab = page.tab
    tab.goto((docs / "index.html").as_uri())
    tab.wait_for_selector(".bootstrap-table tbody tr")
    loaded = tab.evaluate("""() => ({
        jquery: typeof window.jQuery, table: typeof (window.jQuery && jQuery.fn.bootstrapTable),
        bootstrap: typeof (window.jQuery && jQuery.fn.tooltip),
        rows: document.querySelectorAll('.bootstrap-table tbody tr').length,
        suites: [...document.querySelectorAll('.bootstrap-table tbody tr td:last-child')].map(td => td.innerText),
        icons: [...document.fonts].some(f => f.family.includes('Font Awesome') && f.status === 'loaded'),
        css: getComputedStyle(document.querySelector('.nav-tabs')).display})""")
    suites = {s["name"] for s in rel.manifest()["gate"]["suites"]}
    assert loaded["jquery"] == loaded["table"] == loaded["bootstrap"] == "function"
    assert loaded["rows"] >= len(suites) and set(loaded["suites"]) == suites
    assert loaded["icons"] and loaded["css"] == "flex"  # Bootstrap's stylesheet applied
    page.shot("data-docs-index", full_page=False)
    page_one = sorted((docs / "validations").rglob("*examples*.html"))[0]
    tab.goto(page_one.as_uri())
    tab.wait_for_selector("#section-1-content-block-2-body")  # the statistics table of the overview
    body = tab.inner_text("body")
    assert "Expectation Suite: express-examples" in body and "values must never be null." in body
    assert tab.evaluate("typeof window.jQuery") == "function"
    page.shot("data-docs-validation", full_page=False)
    assert page.external == [] and page.errors == []
    licences = docs / "static" / "vendor" / "licenses"
    assert {p.name for p in licences.iterdir()} >= {"jquery.txt", "bootstrap.txt", "bootstrap-table.txt"}
    assert Ledger(reviewed_copy[0], rel.dataset).version == 1
