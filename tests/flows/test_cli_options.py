"""CLI options that change what a command does, each checked against what it must change: the same
command without the option gives something else, so an ignored option fails here. Where the
warehouse is (--warehouse, EXPRESS_WAREHOUSE, the default data/ folder) is an option too; the repo's
own data/ folder is never touched (its default is pointed at a temporary folder)."""
import json
import subprocess
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from flows.cli import main
from tests.evaluation.conftest import tiny_examples
from tests.evaluation.test_independent_values import _relabelled

REPO = Path(__file__).resolve().parents[2]
FILLER = ("We moved to a new city last spring and the first months were a blur of boxes and paperwork. "
          "My partner started a new job, I kept working from home, and the neighbours are friendly. ")


def _publish(root: Path, rows: list[dict], name: str = "tiny"):
    from common.parquet import ParquetSink
    from schemas.config import recipe_from_dict
    from schemas.records import EXAMPLES
    from warehouse.layout import Warehouse
    from warehouse.releases.publish import publish_release

    path = root / f"examples-{len(list(root.glob('examples-*')))}.parquet"
    with ParquetSink(path, EXAMPLES) as sink:
        for row in rows:
            sink.write(row)
    recipe = recipe_from_dict({"dataset": {"name": name}, "gate": {"enabled": False},
                               "splits": {"train": 0.6, "validation": 0.1, "test": 0.3, "seed": "tiny"}})
    return publish_release(path, Warehouse(root), recipe, {})


@pytest.fixture(scope="module")
def two_releases(tmp_path_factory) -> Path:
    """tiny/v1 and tiny/v2, where v2 has more posts and every fourth post relabelled 'tired'."""
    root = tmp_path_factory.mktemp("wh")
    _publish(root, tiny_examples(48))
    _publish(root, _relabelled(tiny_examples(72), every=4, word="tired"))
    return root


def _out(capsys, argv: list[str]) -> str:
    assert main(argv) == 0, capsys.readouterr().err
    return capsys.readouterr().out


# -- express extract -------------------------------------------------------------------------------

TEXTS = {
    "negated": FILLER + "Since then I never felt happy, at all. I feel so sad about it.",
    "extended": FILLER + "I'm feeling hopeless about the move. I feel so sad about it.",
    "reviewed-out": FILLER + "I am calm now. I feel so sad about it.",
}
# masked text after FILLER: the default, then what each option changes
DEFAULT = {"negated": "Since then I never felt happy, at all. I feel so <mask> about it.",
           "extended": "I'm feeling hopeless about the move. I feel so <mask> about it.",
           "reviewed-out": "I am calm now. I feel so <mask> about it."}
WITH = {
    ("--keep-negated",): {"negated": "Since then I never felt <mask>, at all. I feel so <mask> about it."},
    ("--forms", "extended"): {"extended": "I'm feeling <mask> about the move. I feel so <mask> about it."},
    ("--acceptance", "off"): {"reviewed-out": "I am <mask> now. I feel so <mask> about it."},
}


@pytest.mark.parametrize("option", [(), *WITH], ids=lambda o: " ".join(o) or "defaults")
def test_extract_options_each_change_the_masks_they_name(tmp_path, option):
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": k, "text": t}) + "\n" for k, t in TEXTS.items()), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["extract", "--input", str(src), "--output", str(out), *option]) == 0
    rows = {r["id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert {k: r["masked_text"][len(FILLER):] for k, r in rows.items()} == {**DEFAULT, **WITH.get(option, {})}
    negated = [d for d in rows["negated"]["disclosures"] if d["surface"] == "happy"]
    assert [d["negated"] for d in negated] == [True]  # listed with or without --keep-negated
    assert all((d["acceptance"] is None) == (option == ("--acceptance", "off"))
               for r in rows.values() for d in r["disclosures"])


# -- where the warehouse is ------------------------------------------------------------------------

def test_the_default_warehouse_is_the_git_ignored_data_folder_at_the_repo_root(two_releases, tmp_path,
                                                                                monkeypatch, capsys):
    from warehouse import layout

    assert layout.DEFAULT_WAREHOUSE == REPO / "data"
    ignored = subprocess.run(["git", "check-ignore", "-q", "data/"], cwd=REPO)
    assert ignored.returncode == 0, "data/ must be git-ignored"
    monkeypatch.delenv("EXPRESS_WAREHOUSE", raising=False)
    monkeypatch.setattr(layout, "DEFAULT_WAREHOUSE", two_releases)  # never the repo's own data/
    assert _out(capsys, ["releases"]).count("tiny/v") == 2
    monkeypatch.setattr(layout, "DEFAULT_WAREHOUSE", tmp_path / "empty")
    assert _out(capsys, ["releases"]) == ""


def test_express_warehouse_is_used_when_no_warehouse_flag_is_given(two_releases, tmp_path, monkeypatch, capsys):
    from warehouse import layout

    monkeypatch.setattr(layout, "DEFAULT_WAREHOUSE", tmp_path / "default")
    monkeypatch.setenv("EXPRESS_WAREHOUSE", str(two_releases))
    assert _out(capsys, ["releases"]).count("tiny/v") == 2
    assert _out(capsys, ["releases", "--warehouse", str(tmp_path / "other")]) == ""  # the flag wins
    assert not (tmp_path / "default").exists()


def test_build_writes_its_run_id_into_the_warehouse_of_express_warehouse(prefect_harness, tmp_path, monkeypatch,
                                                                          capsys):
    from sources.demo import DemoSpec, write_demo_dump
    from warehouse import layout

    dump = write_demo_dump(tmp_path / "in", DemoSpec(posts=300))
    monkeypatch.setattr(layout, "DEFAULT_WAREHOUSE", tmp_path / "default")
    monkeypatch.setenv("EXPRESS_WAREHOUSE", str(tmp_path / "wh"))
    manifest = Path(_out(capsys, ["build", "--input", str(dump), "--config", str(REPO / "configs" / "demo.toml"),
                                  "--run-id", "my-run-7"]).strip().splitlines()[-1])
    assert manifest.is_relative_to(tmp_path / "wh") and json.loads(manifest.read_text())["run_id"] == "my-run-7"
    assert [p.name for p in (tmp_path / "wh" / "runs").iterdir()] == ["my-run-7"]
    assert not (tmp_path / "default").exists()


# -- releases, diff, card --------------------------------------------------------------------------

def test_releases_lists_the_catalog_views_only_with_views(two_releases, capsys):
    plain = _out(capsys, ["releases", "--warehouse", str(two_releases)]).splitlines()
    views = _out(capsys, ["releases", "--views", "--warehouse", str(two_releases)]).splitlines()
    assert len(plain) == 2 and not any(line.startswith("view\t") for line in plain)
    assert views[:2] == plain
    assert {"view\ttiny_v1_test", "view\ttiny_v2_test", "view\ttiny_latest_test"} <= set(views[2:])


def test_releases_counts_the_rows_of_each_month_of_posting_per_split(tmp_path, capsys):
    rows = tiny_examples(48)
    for i, row in enumerate(rows):  # a third of them a month later (UTC)
        row["created_utc"] = (1706745600 if i % 3 == 0 else 1704067200) + i  # 2024-02-01, 2024-01-01
    release = _publish(tmp_path, rows)
    [line] = _out(capsys, ["releases", "--warehouse", str(tmp_path)]).splitlines()
    months = json.loads(line.split("\tmonths=")[1])
    assert list(months) == ["2024-01", "2024-02"]
    for split, path in release.split_files().items():
        times = pq.read_table(path, columns=["created_utc"]).column(0).to_pylist()
        feb = sum(t >= 1706745600 for t in times)
        assert (months["2024-01"][split], months["2024-02"][split]) == (len(times) - feb, feb)


def test_diff_top_limits_the_label_changes_listed(two_releases, capsys):
    def labels(version: str) -> Counter:
        files = (two_releases / "tiny" / version / "data").glob("*.parquet")
        return Counter(w for f in files for row in pq.read_table(f, columns=["labels"]).to_pylist() for w in row["labels"])

    a, b = labels("v1"), labels("v2")
    changed = sum(1 for w in set(a) | set(b) if a[w] != b[w])
    assert changed > 2
    diff = lambda *top: json.loads(_out(capsys, ["diff", "v1", "v2", "--json", *top, "--warehouse",
                                                 str(two_releases)]))["labels"]["largest_changes"]
    assert len(diff("--top", "2")) == 2
    assert len(diff()) == min(15, changed)  # the default, 15


def test_card_url_goes_into_the_croissant_file(two_releases, tmp_path, capsys):
    for url, out in (("https://example.org/datasets/tiny", tmp_path / "given"), (None, tmp_path / "default")):
        _out(capsys, ["card", "--release", "tiny/v2", "--out", str(out), "--warehouse", str(two_releases),
                      *(["--url", url] if url else [])])
        croissant = json.loads((out / "croissant.json").read_text())
        assert croissant["url"] == (url or "https://huggingface.co/datasets/tiny")


# -- leaderboard -----------------------------------------------------------------------------------

def test_leaderboard_all_lists_every_run_not_only_the_latest(two_releases, capsys):
    from evaluation.run import EvalRequest, evaluate_release
    from warehouse.layout import Warehouse

    wh = Warehouse.at(two_releases)
    runs = [evaluate_release(wh, "tiny/v2", EvalRequest("most-frequent", bootstrap=0)).run_id for _ in range(2)]
    board = lambda *flags: json.loads(_out(capsys, ["leaderboard", "--release", "tiny/v2", "--format", "json",
                                                    *flags, "--warehouse", str(two_releases)]))
    latest = board()
    assert len(latest) == 1 and latest[0]["run"] in runs  # one per predictor/setting/model
    assert sorted(r["run"] for r in board("--all")) == sorted(runs)
