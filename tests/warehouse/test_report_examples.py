"""The report's examples: a deterministic sample per label with its mask highlighted, and the
released masks the acceptance model scored lowest, read from the run's disclosures table."""
import json

import pytest

from common.parquet import ParquetSink, iter_rows
from schemas.records import EXAMPLES
from tests.review.helpers import POSTS, build_tiny_release
from warehouse.layout import Warehouse
from warehouse.layout import ReleasePaths
from warehouse.pages.examples import label_examples, lowest_acceptance, snippet


@pytest.fixture(scope="module")
def tiny(extractor, tmp_path_factory):
    root = tmp_path_factory.mktemp("wh")
    rel = build_tiny_release(root, POSTS, extractor)
    m = rel.manifest()
    m["acceptance"] = {"version": "acceptance-v2", "threshold": 0.558}
    rel.manifest_path.write_text(json.dumps(m))
    return rel


def _shown(pieces) -> str:
    return "".join(f"[{p.text}]" if p.mask == "target" else f"<{p.text}>" if p.mask else p.text for p in pieces)


def test_a_snippet_keeps_the_writing_and_cuts_at_words():
    text = "So I was <mask>. Then, after a long day at work, I felt <mask> about it and went to bed early."
    assert _shown(snippet(text, ["sad", "happy"], 0, 4)) == "So I was [sad]. Then, after a …"
    assert _shown(snippet(text, ["sad", "happy"], 1, 3)) == "… work, I felt [happy] about it and …"
    assert _shown(snippet(text, ["sad", "happy"], 1, 40)) == (
        "So I was <sad>. Then, after a long day at work, I felt [happy] about it and went to bed early.")


def test_label_examples_are_the_same_whatever_the_row_order(tiny, tmp_path):
    files = tiny.split_files()
    rows = list(iter_rows(files["test"]))
    labels = sorted({label for r in rows for label in r["labels"]})
    first = label_examples(files, labels, per_label=2)
    again = label_examples(files, labels, per_label=2)
    reversed_file = tmp_path / ReleasePaths.split_name("test")
    with ParquetSink(reversed_file, EXAMPLES) as sink:
        for r in reversed(rows):
            sink.write(r)
    assert first == again == label_examples({"test": reversed_file}, labels, per_label=2)
    for label, shown in first.items():
        with_label = [r for r in rows if label in r["labels"]]
        assert len(shown) == min(2, len(with_label)) and shown
        for ex in shown:
            row = next(r for r in with_label if (r["post_id"], r["segment_index"]) == (ex.post_id, ex.segment_index))
            [target] = [p for p in ex.pieces if p.mask == "target"]
            j = row["labels"].index(label)
            assert target.text == row["surfaces"][j] == ex.surface and ex.label == label
            assert ex.masks == row["n_masks"] and ex.split == "test" and ex.subreddit == "test"
            # every other mask of the snippet is shown, as a mask, never as plain text
            assert all(p.text in row["surfaces"] for p in ex.pieces if p.mask)


def test_lowest_acceptance_lists_the_released_masks_the_model_was_least_sure_of(tiny):
    m = tiny.manifest()
    got = lowest_acceptance(tiny, m, n=3)
    disclosures = Warehouse.of_release(tiny.path).run(m["run_id"]).disclosures
    scored = sorted((d["acceptance"], row["post_id"], d["surface"]) for row in iter_rows(disclosures)
                    for d in row["disclosures"] if not d["negated"] and d["acceptance"] is not None)
    assert got.missing == "" and got.threshold == 0.558 and got.scored == len(scored) >= 4
    assert [(ex.acceptance, ex.post_id, ex.surface) for ex in got.shown] == scored[:3]
    assert all(p.text == ex.surface for ex in got.shown for p in ex.pieces if p.mask == "target")
    released = {r["post_id"] for r in iter_rows(tiny.split_files()["test"])}
    assert {ex.post_id for ex in got.shown} <= released


def test_without_scores_the_report_says_why(tiny):
    m = tiny.manifest()
    off = lowest_acceptance(tiny, {**m, "acceptance": None})
    assert off.shown == [] and "acceptance model was off" in off.missing
    gone = lowest_acceptance(tiny, {**m, "run_id": "run-deleted"})
    assert gone.shown == [] and "runs/run-deleted" in gone.missing and "no longer in the warehouse" in gone.missing
