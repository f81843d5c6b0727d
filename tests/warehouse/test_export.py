"""Release outputs of the real demo build: manifest, HF card folder, Croissant, report, diff, CLI."""
import json
import logging
import re
import shutil
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from common.parquet import ParquetSink, iter_rows
from flows.cli import main as cli
from schemas.config import GateConfig, load_recipe
from schemas.records import EXAMPLES
from warehouse.layout import Warehouse
from warehouse.releases.publish import publish_release
from warehouse.releases.release import Release
from warehouse.releases.splits import split_for

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo_release(demo_build) -> Release:
    return Release.at(Path(demo_build["release"]["path"]))


def test_manifest_records_what_a_release_needs(demo_release):
    m = demo_release.manifest()
    for key in ("rows", "funnel", "files", "config", "vocabulary", "code_version", "parent_version", "created",
                "gate", "segmentation"):
        assert key in m, key
    assert m["gate"]["success"] and m["segmentation"]["tokenizer"] == "regex-wordpiece-v1"
    assert all(len(f["sha256"]) == 64 for f in m["files"].values())
    assert (demo_release.path / "gate" / "results.json").exists()


def test_card_folder_loads_offline_with_datasets_and_croissant_validates(demo_release, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "card"
    assert cli(["card", "--release", f"{demo_release.dataset}/{demo_release.version}", "--out", str(out),
                "--warehouse", str(demo_release.path.parent.parent)]) == 0
    import datasets

    loaded = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "hf-cache"))
    rows = demo_release.manifest()["rows"]
    assert {s: loaded[s].num_rows for s in loaded} == rows
    assert loaded["test"][0]["masked_text"].count("<mask>") == len(loaded["test"][0]["labels"])

    import mlcroissant as mlc

    ds = mlc.Dataset(jsonld=str(out / "croissant.json"))  # raises on an invalid file
    records = list(ds.records("test"))
    assert len(records) == rows["test"]
    meta = json.loads((out / "croissant.json").read_text())
    assert meta["conformsTo"].startswith("http://mlcommons.org/croissant/")

    from huggingface_hub import DatasetCard

    card = DatasetCard.load(out / "README.md")
    assert set(card.data.task_categories) == {"fill-mask", "text-classification"}
    assert card.data.language == ["en"] and card.data.size_categories
    assert [f["split"] for f in card.data.configs[0]["data_files"]] == list(rows)
    for section in ("## Curation", "## Funnel", "## Label distribution", "## Personal information",
                    "## Reddit terms of use", "## Known biases", "## Licences", "NRC Emotion Lexicon"):
        assert section in card.text
    assert "The [data-quality report](report.html) shows this release" in card.text  # it travels with the folder
    report = (out / "report.html").read_text()
    assert 'id="summary"' in report and "data_docs" not in report and "<script" not in report


def test_reexport_merges_existing_card_metadata(demo_release, tmp_path):
    from huggingface_hub import DatasetCard

    from warehouse.layout import CardPaths
    from warehouse.pages.card import export_card

    out = tmp_path / "card"
    export_card(demo_release, CardPaths(out))
    card = DatasetCard.load(out / "README.md")
    card.data.license = "cc-by-4.0"
    card.data.annotations_creators = ["machine-generated"]
    card.data.tags = ["my-tag"]
    card.text = "Intro written by hand.\n\n" + card.text + "\n## Contact\nme@lab\n"
    card.save(out / "README.md")
    export_card(demo_release, CardPaths(out))
    again = DatasetCard.load(out / "README.md")
    assert again.data.license == "cc-by-4.0"
    assert again.data.annotations_creators == ["machine-generated"]
    assert "my-tag" in again.data.tags and "emotion" in again.data.tags
    assert again.data.configs and "Intro written by hand." in again.text and "## Contact" in again.text
    assert again.text.count("## Curation") == 1


def test_an_export_over_a_readme_without_card_metadata_keeps_its_text_and_says_nothing(demo_release, tmp_path,
                                                                                         caplog):
    """A withdrawal notice or a hand-written README in the folder is not a card: its text is kept,
    with no library warning about a missing metadata block (issue 65)."""
    from huggingface_hub import DatasetCard

    from warehouse.layout import CardPaths
    from warehouse.pages.card import export_card

    out = tmp_path / "card"
    out.mkdir()
    (out / "README.md").write_text("# Our benchmark\n\nWritten by hand.\n")
    with caplog.at_level(logging.INFO):
        export_card(demo_release, CardPaths(out))
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    card = DatasetCard.load(out / "README.md")
    assert card.data.configs and "Written by hand." in card.text and "## Curation" in card.text


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.urls, self.tags = set(), [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "id" in a:
            self.ids.add(a["id"])
        for key in ("src", "href"):
            if a.get(key):
                self.urls.append((tag, a[key]))


def test_report_is_one_self_contained_html_page(demo_release, tmp_path):
    out = tmp_path / "report.html"
    assert cli(["report", "--release", demo_release.version, "--out", str(out),
                "--warehouse", str(demo_release.path.parent.parent)]) == 0
    html = out.read_text()
    page = _Page()
    page.feed(html)
    assert {"summary", "answers", "changes", "labels", "shape", "express", "examples", "look-first", "privacy",
            "review", "funnel", "gate", "details"} <= page.ids
    assert "link" not in page.tags and "script" not in page.tags and "img" not in page.tags and "<style>" in html
    assert page.tags.count("svg") == 6  # the charts, inline
    assert not [u for _, u in page.urls if u.startswith(("http://", "https://", "//")) and "127.0.0.1" not in u]
    docs = [u for t, u in page.urls if t == "a" and "data_docs" in u]
    assert docs and (out.parent / docs[0]).resolve().exists()
    top = max(demo_release.manifest()["rows"].values())
    assert f"{top:,}" in html
    # how it renders (charts drawn, sections visible, no request off the machine) is checked in real
    # Chromium by tests/browser/, which fails when the browser is missing


@pytest.fixture(scope="module")
def published_twice(demo_build, tmp_path_factory):
    """v1 (gate off) and v2 (20 posts fewer, 7 new), published from the demo's examples with no run
    behind them: manifests without a funnel, run or acceptance model."""
    examples = Path(demo_build["extract"]["examples"])
    recipe = load_recipe(REPO / "configs" / "demo.toml")
    rows = list(iter_rows(examples))
    tmp = tmp_path_factory.mktemp("published-twice")
    changed = tmp / "b.parquet"
    with ParquetSink(changed, EXAMPLES) as sink:
        for r in rows[20:]:
            sink.write(r)
        for i in range(7):
            sink.write({**rows[0], "post_id": f"new{i}", "labels": ["grateful"], "surfaces": ["grateful"],
                        "masked_text": "I feel <mask>", "n_masks": 1, "text": "I feel grateful"})
    wh = Warehouse.at(tmp / "wh")
    publish_release(examples, wh, replace(recipe, gate=GateConfig(enabled=False)), {})
    publish_release(changed, wh, recipe, {})
    return wh, rows, recipe


def test_diff_reports_rows_added_and_removed_and_label_change(published_twice, capsys):
    wh, rows, recipe = published_twice
    dropped_posts = {r["post_id"] for r in rows[:20]}
    assert cli(["diff", "v1", "v2", "--json", "--warehouse", str(wh.root)]) == 0
    d = json.loads(capsys.readouterr().out)
    for split in ("train", "validation", "test"):
        removed = sum(1 for r in rows[:20] if split_for(r["post_id"], recipe.splits) == split)
        added = sum(1 for i in range(7) if split_for(f"new{i}", recipe.splits) == split)
        assert (d["splits"][split]["removed"], d["splits"][split]["added"]) == (removed, added)
    assert sum(s["removed"] for s in d["splits"].values()) == 20 and dropped_posts
    change = {r["label"]: r for r in d["labels"]["largest_changes"]}
    assert change["grateful"]["count_b"] - change["grateful"]["count_a"] == 7 - sum(
        r["labels"].count("grateful") for r in rows[:20])
    assert 0 < d["labels"]["js_divergence"] < 0.1
    mps = {r["masks"]: r for r in d["masks_per_segment"]["rows"]}
    assert mps[1]["count_b"] - mps[1]["count_a"] == 7 - sum(1 for r in rows[:20] if r["n_masks"] == 1)
    assert d["words_per_segment"]["b"]["min"] == 3  # "I feel grateful"
    assert d["totals"]["rows_b"] - d["totals"]["rows_a"] == 7 - 20
    assert cli(["diff", "v1", "v2", "--warehouse", str(wh.root)]) == 0
    text = capsys.readouterr().out
    assert f"JS divergence {d['labels']['js_divergence']:.4f}" in text and "words per segment: mean" in text
    assert cli(["releases", "--warehouse", str(wh.root)]) == 0
    listed = capsys.readouterr().out
    assert "express-demo/v1" in listed and "express-demo/v2" in listed


def test_a_report_says_what_a_release_does_not_record(published_twice, tmp_path):
    from warehouse.pages.report import render_report

    wh, _, _ = published_twice
    v1, v2 = (Release.find(wh, f"express-demo/{v}") for v in ("v1", "v2"))
    first = render_report(v1, tmp_path / "v1.html").read_text()
    assert "The gate was not run for this release." in first and "first release" in first
    second = render_report(v2, tmp_path / "v2.html").read_text()
    assert "This release records no funnel." in second and "The acceptance model was off" in second
    assert 'id="diff-splits"' in second and "v1: not run" in second  # the band: v1's gate
    moved = tmp_path / "wh"
    shutil.copytree(wh.root / "express-demo" / "v2", moved / "express-demo" / "v2")
    orphan = render_report(Release.at(moved / "express-demo" / "v2"), tmp_path / "orphan.html").read_text()
    assert "The parent release v1 is no longer in the warehouse: nothing to compare with." in orphan
    for page in (first, second, orphan):
        shown = re.sub(r"<[^>]+>", " ", page.split("<body>", 1)[1])
        assert not re.findall(r"\{'|\bNone\b|\bnan\b|\bTrue\b|\bFalse\b", shown)


def test_build_with_a_failing_gate_exits_non_zero_and_publishes_nothing(prefect_harness, demo_dump, tmp_path, capsys):
    cfg = tmp_path / "strict.toml"
    demo = (REPO / "configs" / "demo.toml").read_text()
    assert "max_label_share = 0.25" in demo
    cfg.write_text(demo.replace("max_label_share = 0.25", "max_label_share = 0.01"))
    wh = tmp_path / "wh"
    assert cli(["build", "--input", str(demo_dump), "--config", str(cfg), "--warehouse", str(wh)]) != 0
    err = capsys.readouterr().err
    assert "quality gate failed" in err and "no single label above the configured share" in err
    assert Warehouse.at(wh).versions("express-demo") == []
    assert not list((wh / "express-demo").glob("v*"))
