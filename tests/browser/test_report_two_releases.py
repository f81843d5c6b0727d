"""The data-quality report as a person sees it, in real Chromium with the network cut: two
successive releases (the demo corpus, then a rebuild with the next month, as `express demo` makes
them). The summary band and every comparison figure are read off the page and checked against
`express diff --json` and the manifest; no Python or JSON repr shows anywhere."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from flows.cli import main
from flows.cli.core import DEMO_CONFIG, demo_months
from sources.demo import write_demo_dump
from tests.builds import rebuild
from warehouse.releases.release import Release

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)

REPR = re.compile(r"\{'|\bNone\b|\bnan\b|\bNaN\b|\bTrue\b|\bFalse\b|\bnull\b|\bundefined\b|\[\]|\{\}")


@pytest.fixture(scope="module")
def two_releases(demo_build, demo_dump, tmp_path_factory):
    """v1 (the shared demo build, copied) and v2: v1 plus the demo's second month."""
    root = tmp_path_factory.mktemp("two-releases") / "wh"
    shutil.copytree(demo_build["warehouse"], root)
    _, second = demo_months(800)
    dump = write_demo_dump(root.parent / "in", second)
    built = rebuild([str(demo_dump), str(dump)], str(root), str(DEMO_CONFIG), workers=0)
    assert built["release"]["version"] == "v2"
    return root, Release.at(root / "express-demo" / "v1"), Release.at(root / "express-demo" / "v2")


def _cli_json(capsys, args: list[str]):
    capsys.readouterr()
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


def _report(capsys, root: Path, release: str) -> Path:
    capsys.readouterr()
    assert main(["report", "--release", release, "--warehouse", str(root)]) == 0
    return Path(capsys.readouterr().out.strip())


def _int(cell: str) -> int:
    return int(cell.replace(",", "").replace("±", "").replace("+", ""))


def _share(cell: str) -> float:
    return float(cell.replace("%", "").replace(" pp", "").replace("±", "").replace("+", "")) / 100


def _close(cell: str, value: float) -> bool:
    """A share shown with one decimal of a percent is the value, rounded."""
    return abs(_share(cell) - value) <= 0.0005 + 1e-12


def _rows(tab, selector: str) -> list[list[str]]:
    return tab.eval_on_selector_all(f"{selector} tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText.trim()))")


def _open_toggles(tab) -> None:
    for summary in tab.query_selector_all("details:not([open]) > summary"):
        summary.click()


def test_the_report_of_a_rebuilt_release_compares_it_with_its_parent(two_releases, page, capsys):
    root, v1, v2 = two_releases
    d = _cli_json(capsys, ["diff", "express-demo/v1", "express-demo/v2", "--json", "--warehouse", str(root)])
    m = v2.manifest()
    tab = page.tab
    tab.goto(_report(capsys, root, "express-demo/v2").as_uri())
    page.shot("report-v2-first-screen", full_page=False)

    # the summary band, against the manifest and the diff
    assert tab.inner_text("#band-gate .value") == "passed" and m["gate"]["success"]
    assert _int(tab.inner_text("#band-rows .value")) == sum(m["rows"].values()) == d["totals"]["rows_b"]
    per_split = _rows(tab, "#band-rows")
    assert {r[0]: _int(r[1]) for r in per_split} == m["rows"]
    assert {r[0]: _int(r[2]) for r in per_split} == {s: c["rows_b"] - c["rows_a"] for s, c in d["splits"].items()}
    grew = d["totals"]["rows_b"] - d["totals"]["rows_a"]
    assert grew > 0 and tab.inner_text("#band-rows .delta").startswith(f"+{grew:,} (") and "since v1" in tab.inner_text(
        "#band-rows .delta")
    assert _int(tab.inner_text("#band-masks .value")) == sum(m["masks"].values()) == d["labels"]["masks_b"]
    assert tab.inner_text("#band-masks .sub") == f"{sum(m['masks'].values()) / sum(m['rows'].values()):.2f} per segment"
    assert _int(tab.inner_text("#band-labels .value")) == d["labels"]["distinct_b"]
    new, gone = d["labels"]["new_labels"], d["labels"]["gone_labels"]
    assert tab.inner_text("#band-labels .delta") == (f"{len(new)} new, {len(gone)} gone since v1" if new or gone
                                                     else "none new or gone since v1")
    assert tab.inner_text("#band-shift .value") == f"{d['labels']['js_divergence']:.4f}"

    # what changed: rows per split, exactly as `express diff` counts them
    rows = _rows(tab, "#diff-splits")
    for split, c in d["splits"].items():
        [r] = [r for r in rows if r[0] == split]
        assert [_int(x) for x in r[1:]] == [c["rows_a"], c["rows_b"], c["added"], -c["removed"], c["kept"]]
    assert sum(c["added"] for c in d["splits"].values()) == grew and not any(c["removed"] for c in d["splits"].values())

    # labels: every label's counts and shares, the divergence, new and gone
    _open_toggles(tab)
    labels = {r[0]: r[1:] for r in _rows(tab, "#diff-labels")}
    assert list(labels) == [r["label"] for r in d["labels"]["rows"]]
    for r in d["labels"]["rows"]:
        count_a, share_a, count_b, share_b, delta = labels[r["label"]]
        assert (_int(count_a), _int(count_b)) == (r["count_a"], r["count_b"])
        assert _close(share_a, r["share_a"]) and _close(share_b, r["share_b"]) and _close(delta, r["delta"])
    assert f"{d['labels']['js_divergence']:.4f}" in tab.inner_text("#diff-js")
    for which, words in (("new", new), ("gone", gone)):
        shown = tab.eval_on_selector_all(f"#diff-{which} .chip", "cs => cs.map(c => c.innerText)")
        assert shown == words and tab.inner_text(f"#diff-{which}").startswith(f"{which.capitalize()} labels ({len(words)})")
    largest = [r[0] for r in _rows(tab, "#diff-largest")]
    assert largest == [r["label"] for r in d["labels"]["largest_changes"]][:len(largest)] and len(largest) == 6

    # masks per segment and lengths, overlaid; the funnel's reasons side by side; subreddits
    masks = _rows(tab, "#diff-masks")
    assert [[_int(x) for x in (r[0], r[1], r[3])] for r in masks] == [
        [r["masks"], r["count_a"], r["count_b"]] for r in d["masks_per_segment"]["rows"]]
    assert all(_close(a[2], r["share_a"]) and _close(a[4], r["share_b"])
               for a, r in zip(masks, d["masks_per_segment"]["rows"]))
    words = {r[0]: r[1:] for r in _rows(tab, "#diff-words")}
    for key in ("mean", "median", "min", "max"):
        a, b = d["words_per_segment"]["a"][key], d["words_per_segment"]["b"][key]
        assert words[key] == ([f"{a:,.1f}", f"{b:,.1f}"] if key == "mean" else [f"{a:,}", f"{b:,}"])
    funnel = {r[0]: r[1:] for r in _rows(tab, "#diff-funnel")}
    f = d["funnel"]
    assert (_int(funnel["read"][0]), _int(funnel["read"][2])) == (f["read_a"], f["read_b"]) == (
        v1.manifest()["funnel"]["read"], m["funnel"]["read"])
    assert (_int(funnel["kept"][0]), _int(funnel["kept"][2])) == (f["kept_a"], f["kept_b"])
    for r in f["dropped"]:
        count_a, share_a, count_b, share_b = funnel[f"dropped: {r['reason']}"]
        assert (_int(count_a), _int(count_b)) == (r["count_a"], r["count_b"]) == (
            v1.manifest()["funnel"]["dropped"].get(r["reason"], 0), m["funnel"]["dropped"].get(r["reason"], 0))
        assert _close(share_a, r["share_a"]) and _close(share_b, r["share_b"])
    assert tab.inner_text("#funnel-total") == (
        f"Read {m['funnel']['read']:,} posts = kept {m['funnel']['kept']:,} + dropped "
        f"{sum(m['funnel']['dropped'].values()):,} + malformed {m['funnel']['malformed']:,}.")
    assert [[r[0], _int(r[1]), _int(r[2])] for r in _rows(tab, "#diff-subreddits")] == [
        [r["subreddit"], r["count_a"], r["count_b"]] for r in d["subreddits"]["top"]]

    # against EXPRESS: the paper's figures beside this release's (from the manifest)
    express = {r[0]: r[1:] for r in _rows(tab, "#express-figures")}
    assert express["masks per segment"][:2] == ["1.56", f"{sum(m['masks'].values()) / sum(m['rows'].values()):.2f}"]
    assert express["words per segment"][:2] == ["259", f"{d['words_per_segment']['b']['mean']:,.1f}"]
    assert express["words per segment, shortest to longest"][:2] == [
        "20–492", f"{d['words_per_segment']['b']['min']}–{d['words_per_segment']['b']['max']}"]
    assert "Segments here are shorter than EXPRESS's" in express["words per segment"][2]  # demo posts are short
    assert _int(express["segments"][0]) == 33679 and _int(express["segments"][1]) == sum(m["rows"].values())

    # examples: each top label's segments with its mask highlighted and the post id
    blocks = tab.eval_on_selector_all(".label-examples", """bs => bs.map(b => ({head: b.querySelector('h3').innerText,
        marks: [...b.querySelectorAll('.ex')].map(e => e.querySelectorAll('mark.target').length),
        titles: [...b.querySelectorAll('mark.target')].map(t => t.title),
        sources: [...b.querySelectorAll('.src')].map(s => s.innerText)}))""")
    counts = {r["label"]: r["count_b"] for r in d["labels"]["rows"]}
    top = sorted(counts, key=lambda w: (-counts[w], w))[:6]
    assert [b["head"] for b in blocks] == [f"{w} · {counts[w]:,} masks" for w in top]
    ids = {i for p in v2.split_files().values() for i in pq.read_table(p, columns=["post_id"]).column(0).to_pylist()}
    for b, label in zip(blocks, top):
        assert b["marks"] == [1, 1, 1] and set(b["titles"]) == {f"masked word, label {label}"}
        assert all(s.split(" · ")[0].split(",")[0].removeprefix("post ") in ids for s in b["sources"])

    # look at these first: the lowest acceptance scores, each above the model's threshold, and the way to review
    scores = [float(r[0]) for r in _rows(tab, "#look-first-table")]
    assert len(scores) == 10 and scores == sorted(scores) and min(scores) >= round(m["acceptance"]["threshold"], 3)
    assert tab.get_attribute("#look-first ~ p a[href^='http://127.0.0.1:']", "href") == "http://127.0.0.1:8765/"
    assert "express review serve --release express-demo/v2" in tab.inner_text("#look-first ~ p code")

    # privacy: placeholders counted in the released texts; the gate's re-check
    placeholders = {r[1]: (_int(r[2]), _int(r[3])) for r in _rows(tab, "#placeholders")}
    texts = [t for p in v2.split_files().values() for t in pq.read_table(p, columns=["text"]).column(0).to_pylist()]
    for mark, (n, segs) in placeholders.items():
        assert (n, segs) == (sum(t.count(mark) for t in texts), sum(mark in t for t in texts)), mark
    assert placeholders["[USER]"][0] > 0 and placeholders["[EMAIL]"][0] > 0  # the second month has some to scrub
    assert f"all {sum(m['rows'].values()):,} rows" in tab.inner_text("#pii-recheck")

    # charts drawn, sections reachable from the bar, nothing fetched, no repr shown anywhere
    sizes = tab.eval_on_selector_all("svg.chart", "cs => cs.map(c => c.getBoundingClientRect().width)")
    assert len(sizes) == 6 and min(sizes) > 200  # labels, masks, lengths, EXPRESS, funnel, dimensions
    targets = tab.eval_on_selector_all("nav a", "as => as.map(a => !!document.getElementById(a.hash.slice(1)))")
    assert len(targets) == 11 and all(targets)
    tab.click("nav >> text=Against EXPRESS")
    assert 0 <= tab.eval_on_selector("#express", "e => e.getBoundingClientRect().top") < 120
    page.shot("report-v2-against-express", full_page=False)
    tab.evaluate("window.scrollTo(0, 0)")
    page.shot("report-v2-full-page-toggles-open")
    shown = tab.evaluate("() => { document.querySelectorAll('.ex').forEach(e => e.remove()); "
                         "return document.body.innerText; }")
    assert not REPR.findall(shown), REPR.findall(shown)
    assert page.external == [] and page.errors == []


def test_the_report_of_a_first_release_says_so(two_releases, page, capsys):
    root, v1, _ = two_releases
    tab = page.tab
    tab.goto(_report(capsys, root, "express-demo/v1").as_uri())
    for card in ("rows", "masks", "labels", "shift"):
        assert tab.inner_text(f"#band-{card} .delta") == "first release"
    assert tab.inner_text("#changes ~ p:not(.question)") == "This is the first release of express-demo: nothing to compare with."
    page.shot("report-v1-first-release", full_page=False)
    _open_toggles(tab)
    labels = _rows(tab, "#labels-table")
    assert sum(_int(r[1]) for r in labels) == sum(v1.manifest()["masks"].values())
    assert not REPR.findall(tab.evaluate("() => document.body.innerText"))
    assert page.external == [] and page.errors == []
