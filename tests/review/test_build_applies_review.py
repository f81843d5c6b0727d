"""Decisions shape the next build, for real: export -> decisions -> import -> `build` again over the
same dump. Rejected masks are gone from the new release (the word stays as text), accepted ones
stay masked, a post left with no mask is dropped as `review_rejected`, the funnel stays exact,
and the manifest records the ledger version it applied."""
import json
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

from flows.cli import main

REPO = Path(__file__).resolve().parents[2]


def _masks_by_post(release: Path) -> tuple[Counter, Counter]:
    """Masks per post and segments per post of a release."""
    masks, segments = Counter(), Counter()
    for f in (release / "data").glob("*.parquet"):
        for r in pq.read_table(f, columns=["post_id", "n_masks"]).to_pylist():
            masks[r["post_id"]] += r["n_masks"]
            segments[r["post_id"]] += 1
    return masks, segments


def test_a_rebuild_after_review_drops_the_rejected_masks_and_keeps_the_accepted(prefect_harness, demo_copy,
                                                                               demo_dump, tmp_path, capsys):
    from tests.builds import build

    root, rel = demo_copy
    release = f"{rel.dataset}/{rel.version}"
    items_file = tmp_path / "items.jsonl"
    assert main(["review", "export", "--release", release, "--warehouse", str(root), "--out", str(items_file),
                 "--sample", "30", "--seed", "3"]) == 0
    items = [json.loads(line) for line in items_file.read_text().splitlines()]
    before, segments = _masks_by_post(rel.path)
    single = [it for it in items if segments[it["post_id"]] == 1]  # one segment: its masks are the post's
    by_post: dict[str, list[dict]] = {}
    for it in single:
        by_post.setdefault(it["post_id"], []).append(it)
    whole = next(p for p, its in by_post.items() if len(its) == before[p])  # every mask of it reviewed
    rejected = {it["item_id"] for it in by_post[whole]} | {its[0]["item_id"] for p, its in by_post.items() if p != whole}
    decisions = tmp_path / "decisions.jsonl"
    decisions.write_text("".join(json.dumps({"item_id": it["item_id"], "reviewer": "ana",
                                             "decision": "reject" if it["item_id"] in rejected else "accept"}) + "\n"
                                 for it in items))
    assert main(["review", "import", str(decisions), "--warehouse", str(root)]) == 0
    capsys.readouterr()

    built = build([str(demo_dump)], str(root), str(REPO / "configs" / "demo.toml"), workers=0)
    new = Path(built["release"]["path"])
    manifest = json.loads((new / "manifest.json").read_text())
    assert built["release"]["version"] == "v2" and manifest["review"]["ledger_version"] == 1
    assert manifest["review"]["rejected_items"] == len(rejected)
    after, _ = _masks_by_post(new)
    for post, its in by_post.items():
        gone = sum(it["item_id"] in rejected for it in its)
        assert after.get(post, 0) == before[post] - gone, post
    assert whole not in after  # review took every mask: the post is dropped
    emptied = [p for p, its in by_post.items() if before[p] == sum(it["item_id"] in rejected for it in its)]
    f, old = manifest["funnel"], rel.manifest()["funnel"]
    assert f["dropped"]["review_rejected"] == len(emptied) >= 1 and f["read"] == old["read"]
    assert f["read"] == f["kept"] + sum(f["dropped"].values()) + f["malformed"]
    # a rejected word of a post that keeps other masks stays as text: its surface left the labels
    partly = next(p for p, its in by_post.items() if 0 < after.get(p, 0) < before[p])
    new_rows = [r for f in (new / "data").glob("*.parquet") for r in pq.read_table(f).to_pylist()
                if r["post_id"] == partly]
    gone = [it for it in by_post[partly] if it["item_id"] in rejected]
    assert len(new_rows) == 1 and len(new_rows[0]["surfaces"]) == before[partly] - len(gone)
    assert all(it["surface"] in new_rows[0]["masked_text"] for it in gone)
    assert main(["diff", release, f"{rel.dataset}/v2", "--warehouse", str(root)]) == 0
    assert "v2" in capsys.readouterr().out
