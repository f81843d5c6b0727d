"""Import: our JSONL decisions and Label Studio exports, all or nothing, errors naming file and line."""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from flows.cli import main
from review.imports import ReviewInputError, import_decisions
from review.items import ReviewItem, context_words, make_item_id
from review.labelstudio import labeling_config, task
from review.ledger import Ledger
from review.registry import register_items
from tests.review.helpers import POSTS

TEXT = POSTS["p2"]


def _item(word: str, occurrence: int = 0) -> ReviewItem:
    start = TEXT.index(word)
    end = start + len(word)
    left, right = context_words(TEXT, start, end)
    return ReviewItem(make_item_id("p2", word, occurrence), "ds", "ds/v1", "p2", 0, TEXT, start, end, word,
                      "family1", "family1:i+feel:after_modifiers", word, False, occurrence, 1, left, right)


@pytest.fixture
def registered(tmp_path):
    items = [_item("relieved"), _item("dreading"), _item("patient")]
    register_items(tmp_path, items)
    return tmp_path, items


def _jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_jsonl_decisions_go_to_the_ledger_with_reviewer_time_and_identity(registered, capsys):
    root, items = registered
    f = _jsonl(root / "d.jsonl", [{"item_id": items[0].item_id, "decision": "accept", "reviewer": "ana"},
                                  {"item_id": items[1].item_id, "decision": "REJECT"},
                                  {"item_id": items[2].item_id, "decision": "reject", "time": "2026-02-03T04:05:06Z"}])
    assert main(["review", "import", str(f), "--reviewer", "bo", "--warehouse", str(root)]) == 0
    assert "imported 3 decisions (jsonl) -> ledger ds v1" in capsys.readouterr().out
    entries = Ledger(root, "ds").read()
    assert [(e.reviewer, e.decision) for e in entries] == [("ana", "accept"), ("bo", "reject"), ("bo", "reject")]
    assert entries[2].time == "2026-02-03T04:05:06Z" and re.match(r"\d{4}-\d\d-\d\dT.*Z$", entries[0].time)
    assert entries[0].post_id == "p2" and entries[0].surface == "relieved" and entries[0].left == items[0].left
    assert entries[1].source == "jsonl:d.jsonl:2"


@pytest.mark.parametrize("line, message", [
    ("{not json", "not valid JSON"),
    ({"item_id": "0000000000000000", "decision": "accept", "reviewer": "ana"}, "unknown item_id '0000000000000000'"),
    ({"item_id": "@ID", "decision": "maybe", "reviewer": "ana"}, "decision must be 'accept' or 'reject'"),
    ({"item_id": "@ID", "decision": "accept"}, "no reviewer"),
    ({"item_id": "@ID", "decision": "accept", "reviewer": "ana", "time": "yesterday"}, "not an ISO 8601"),
    ([1, 2], "must be a JSON object"),
])
def test_a_bad_line_names_file_and_line_and_imports_nothing(registered, capsys, line, message):
    root, items = registered
    good = {"item_id": items[0].item_id, "decision": "accept", "reviewer": "ana"}
    if isinstance(line, dict):
        line = {k: (items[1].item_id if v == "@ID" else v) for k, v in line.items()}
    f = _jsonl(root / "bad.jsonl", [good, "", line, good])
    assert main(["review", "import", str(f), "--warehouse", str(root)]) == 2
    err = capsys.readouterr().err
    assert f"{f}:3: " in err and message in err and "nothing imported" in err
    assert "Traceback" not in err
    assert Ledger(root, "ds").version == 0


def test_dataset_picks_the_ledger_of_an_item_two_datasets_hold(registered, capsys):
    """The same post released under two dataset names gives the same item id in both: without
    --dataset the import stops naming both; with it, the decision goes to that dataset alone."""
    from dataclasses import replace

    root, items = registered
    register_items(root, [replace(items[0], dataset="ds-copy", release="ds-copy/v1")])
    f = _jsonl(root / "d.jsonl", [{"item_id": items[0].item_id, "decision": "accept", "reviewer": "ana"}])
    assert main(["review", "import", str(f), "--warehouse", str(root)]) == 2
    err = capsys.readouterr().err
    assert "in several datasets (ds, ds-copy); pass --dataset" in err and "nothing imported" in err
    assert main(["review", "import", str(f), "--dataset", "ds-copy", "--warehouse", str(root)]) == 0
    assert "-> ledger ds-copy v1" in capsys.readouterr().out
    assert [(e.dataset, e.decision) for e in Ledger(root, "ds-copy").read()] == [("ds-copy", "accept")]
    assert Ledger(root, "ds").version == 0


# A Label Studio JSON export written by hand from the documented format (guide/task_format:
# tasks with id, data, annotations[{id, completed_by, result[{from_name, to_name, type, value}],
# was_cancelled, created_at, updated_at, lead_time, task}], predictions).
def _label_studio_export(items) -> str:
    a, b, c = items
    def result(choice):
        return [{"id": "W1", "from_name": "word", "to_name": "text", "type": "labels", "origin": "prediction",
                 "value": {"start": a.start, "end": a.end, "text": a.surface, "labels": ["disclosure"]}},
                {"id": "D1", "from_name": "decision", "to_name": "text", "type": "choices", "origin": "manual",
                 "value": {"choices": [choice]}}]
    tasks = [
        {"id": 11, "project": 3, "created_at": "2026-03-01T10:00:00.000000Z", "updated_at": "2026-03-01T11:00:00.000000Z",
         "data": {"text": a.text, "item_id": a.item_id, "post_id": a.post_id},
         "annotations": [
             {"id": 101, "completed_by": 1, "result": result("accept"), "was_cancelled": False, "ground_truth": False,
              "created_at": "2026-03-01T10:30:00.000000Z", "updated_at": "2026-03-01T10:31:00.000000Z",
              "lead_time": 4.2, "result_count": 0, "task": 11},
             {"id": 102, "completed_by": {"id": 2, "email": "bo@example.org", "first_name": "", "last_name": ""},
              "result": result("reject"), "was_cancelled": False, "ground_truth": False,
              "created_at": "2026-03-01T10:40:00.000000Z", "updated_at": "2026-03-01T10:41:00.000000Z",
              "lead_time": 3.0, "result_count": 0, "task": 11}],
         "predictions": [{"model_version": "express", "result": result("accept")[:1]}]},
        {"id": 12, "data": {"text": b.text, "item_id": b.item_id},
         "annotations": [{"id": 103, "completed_by": 1, "result": [], "was_cancelled": True,
                          "created_at": "2026-03-01T10:50:00Z", "updated_at": "2026-03-01T10:50:00Z", "task": 12}]},
        {"id": 13, "data": {"text": c.text, "item_id": c.item_id}, "annotations": [], "predictions": []},
    ]
    return json.dumps(tasks, indent=2)


def test_a_hand_written_label_studio_export_imports_correctly(registered, capsys):
    root, items = registered
    f = root / "project-3-at-2026-03-01.json"
    f.write_text(_label_studio_export(items))
    assert main(["review", "import", str(f), "--warehouse", str(root)]) == 0
    out = capsys.readouterr().out
    assert "imported 2 decisions (label-studio)" in out and "1 cancelled annotations and 1 unannotated" in out
    entries = Ledger(root, "ds").read()
    assert [(e.item_id, e.reviewer, e.decision, e.time) for e in entries] == [
        (items[0].item_id, "label-studio-user-1", "accept", "2026-03-01T10:31:00.000000Z"),
        (items[0].item_id, "bo@example.org", "reject", "2026-03-01T10:41:00.000000Z")]
    assert entries[0].source == "label-studio:project-3-at-2026-03-01.json:task 11:annotation 101"
    # --reviewer cannot fold two Label Studio users into one
    with pytest.raises(ReviewInputError, match="annotations by 2 users"):
        import_decisions(f, root, reviewer="ana")


def test_label_studio_json_min_export_imports_and_errors_name_the_task_line(registered):
    root, items = registered
    f = root / "min.json"
    f.write_text(json.dumps([{"id": 11, "text": "...", "item_id": items[0].item_id, "decision": "reject",
                              "annotator": 1, "annotation_id": 101, "updated_at": "2026-03-01T10:31:00Z"}]))
    res = import_decisions(f, root, reviewer="ana")
    assert [(e.reviewer, e.decision) for e in res.entries] == [("ana", "reject")]
    bad = root / "bad.json"
    tasks = json.loads(_label_studio_export(items))
    tasks[0]["annotations"][1]["result"][1]["value"]["choices"] = ["unsure"]
    bad.write_text(json.dumps(tasks, indent=2))
    line = json.dumps(tasks, indent=2).splitlines().index("  {") + 1
    with pytest.raises(ReviewInputError, match=rf"bad\.json:{line} \(task 11\): decision must be"):
        import_decisions(bad, root)
    assert Ledger(root, "ds").version == 1


def test_label_studio_tasks_and_config_follow_the_documented_schema(registered):
    _, items = registered
    root = ET.fromstring(labeling_config())
    assert root.tag == "View"
    names = {el.get("name"): el for el in root.iter() if el.get("name")}
    objects = {n for n, el in names.items() if el.tag == "Text"}
    for el in root.iter():
        if el.get("toName"):
            assert el.get("toName") in objects  # controls point at an object tag
    assert [c.get("value") for c in names["decision"].iter("Choice")] == ["accept", "reject"]
    assert names["decision"].tag == "Choices" and names["word"].tag == "Labels"
    variables = {el.get("value")[1:] for el in root.iter() if (el.get("value") or "").startswith("$")}
    for it in items:
        t = task(it)
        assert variables <= set(t["data"])  # every $variable of the config is in the task's data
        [region] = t["predictions"][0]["result"]
        assert (region["from_name"], region["to_name"], region["type"]) == ("word", "text", "labels")
        v = region["value"]
        assert t["data"]["text"][v["start"]:v["end"]] == v["text"] == it.surface
        assert v["labels"][0] in [lab.get("value") for lab in names["word"].iter("Label")]
        assert t["data"]["item_id"] == it.item_id
