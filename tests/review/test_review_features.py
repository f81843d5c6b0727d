"""Review decisions become training rows of the acceptance model: export -> decisions -> import ->
`express review features` -> `train-acceptance --review` reads them."""
import json

from extractors import acceptance_training as tr
from flows.cli import main


def test_each_reviewed_mask_becomes_a_row_with_its_features_and_verdict(demo_copy, tmp_path, capsys):
    root, rel = demo_copy
    release = f"{rel.dataset}/{rel.version}"
    items_file = tmp_path / "items.jsonl"
    assert main(["review", "export", "--release", release, "--warehouse", str(root), "--out", str(items_file),
                 "--sample", "24", "--seed", "5"]) == 0
    items = {it["item_id"]: it for it in map(json.loads, items_file.read_text().splitlines())}
    rejected = set(sorted(items)[::3])
    decisions = tmp_path / "decisions.jsonl"
    decisions.write_text("".join(json.dumps({"item_id": i, "reviewer": "ana",
                                             "decision": "reject" if i in rejected else "accept"}) + "\n"
                                 for i in items))
    assert main(["review", "import", str(decisions), "--warehouse", str(root)]) == 0
    capsys.readouterr()

    out = tmp_path / "review-rows.jsonl"
    assert main(["review", "features", "--release", release, "--warehouse", str(root), "--out", str(out)]) == 0
    said = capsys.readouterr()
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["item_id"] for r in rows} == set(items)  # every decided mask, once
    assert all(r["accepted"] == (r["item_id"] not in rejected) for r in rows)
    for r in rows:  # the hit at the mask: its family and word are among the features
        item = items[r["item_id"]]
        assert (r["post_id"], r["surface"], r["pattern"]) == (item["post_id"], item["surface"], item["pattern"])
        assert f"family={item['pattern']}" in r["features"]
    assert f"{len(rows)} training rows ({len(items) - len(rejected)} accepted, {len(rejected)} rejected)" in said.out
    assert tr.read_review(out) == [(tuple(r["features"]), r["accepted"]) for r in rows]


def test_features_of_a_release_without_decisions_is_an_error(demo_copy, tmp_path, capsys):
    root, rel = demo_copy
    out = tmp_path / "rows.jsonl"
    assert main(["review", "features", "--release", f"{rel.dataset}/{rel.version}", "--warehouse", str(root),
                 "--out", str(out)]) == 2
    assert "no review decisions" in capsys.readouterr().err and not out.exists()


def test_features_use_the_trigger_forms_the_release_was_built_with(tmp_path):
    """A release built with forms = "extended" holds masks the reference forms never find
    ("I'd feel ..."): their rows are found, not left out."""
    from extractors.acceptance import OFF
    from extractors.disclosures import DisclosureExtractor
    from review.features import review_feature_rows
    from review.items import release_items
    from review.ledger import Entry, Ledger
    from tests.review.helpers import build_tiny_release

    rel = build_tiny_release(tmp_path, {"p1": "I'd feel embarrassed if they saw it. I felt guilty after that."},
                             DisclosureExtractor(forms="extended", acceptance=OFF))
    manifest = rel.manifest()
    manifest["config"]["extract"]["forms"] = "extended"
    (rel.path / "manifest.json").write_text(json.dumps(manifest))
    items = release_items(rel, tmp_path).items
    assert sorted(it.surface for it in items) == ["embarrassed", "guilty"]
    Ledger(tmp_path, rel.dataset).append([
        Entry(item_id=it.item_id, decision="reject" if it.surface == "embarrassed" else "accept", reviewer="ana",
              time="2026-01-01T00:00:00Z", source="test", dataset=rel.dataset, **it.identity()) for it in items])

    found = review_feature_rows(rel, tmp_path)
    assert not found.not_found
    assert {r["surface"]: r["accepted"] for r in found.rows} == {"embarrassed": False, "guilty": True}
