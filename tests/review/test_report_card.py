"""The data-quality report and the dataset card show reviewed precision once a review exists."""
from __future__ import annotations

from pipeline.release_docs import write_card
from review.items import release_items
from review.ledger import Entry, Ledger, now
from review.stats import release_review
from warehouse.layout import Warehouse


def _review(root, rel, accepted: int, rejected: int) -> None:
    items = release_items(rel, root).items[:accepted + rejected]
    Ledger(root, rel.dataset).append(
        Entry(item_id=it.item_id, decision="accept" if i < accepted else "reject", reviewer="ana", time=now(),
              source="test", dataset=it.dataset, **it.identity()) for i, it in enumerate(items))


def test_report_and_card_show_reviewed_precision_once_a_review_exists(demo_copy, tmp_path):
    root, rel = demo_copy
    assert release_review(rel) is None  # the report says no mask was reviewed yet
    wh = Warehouse.of_release(rel.path)
    assert "## Hand review" not in write_card(wh, rel.release_id, tmp_path / "card")["readme"].read_text()
    _review(root, rel, accepted=16, rejected=4)  # 0.800, Wilson [0.584, 0.919]
    readme = write_card(wh, rel.release_id, tmp_path / "card")["readme"].read_text()  # re-export into the same folder
    assert readme.count("## Hand review") == 1
    assert "20 masks of this release were reviewed by hand (1 reviewer(s)" in readme
    assert "reviewed precision 0.800, Wilson 95 % interval\n[0.584, 0.919] (16 accepted, 4 rejected)" in readme
    assert "| family" in readme.split("## Hand review")[1]
    assert release_review(rel)["overall"]["reviewed"] == 20
    # the report's review section is checked in the browser (tests/browser/test_report_and_data_docs.py)
