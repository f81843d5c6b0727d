"""Predictors never see the answers: a cheating plugin, run by `express evaluate`, finds none.

The control test hands the same cheater what the runner used to hand out (whole release rows, or
a train split that holds the evaluated posts) and shows it then recovers every gold word, so the
isolation test can fail."""
import json
from pathlib import Path

import pyarrow.parquet as pq

from evaluation.predictors.base import Item, TrainItem
from flows.cli import main
from tests.evaluation.cheating import Cheater
from warehouse.layout import Warehouse
from warehouse.releases.release import Release

CHEATER = "tests.evaluation.cheating:Cheater"
ITEM_FIELDS = ["masked_text", "n_masks", "post_id", "segment_index", "subreddit"]


def split_rows(tiny_release, split: str) -> list[dict]:
    rel = Release.find(Warehouse.at(tiny_release["warehouse"]), tiny_release["release"])
    return pq.read_table(rel.split_file(split)).to_pylist()


def test_the_cheater_recovers_every_answer_when_it_is_handed_them(tiny_release):
    test = split_rows(tiny_release, "test")
    gold = [[w for w in r["surfaces"]] for r in test]
    rows_cheater = Cheater(None)
    assert [eval(a) for a in rows_cheater.predict_many(test)] == gold  # whole rows: the old runner's input
    assert set(rows_cheater.found) == {"input:item"}
    fit_cheater = Cheater(None)  # a train split that holds the evaluated posts
    fit_cheater.fit(TrainItem.from_row(r) for r in test)
    assert [eval(a) for a in fit_cheater.predict_many([Item.from_row(r) for r in test])] == gold
    assert fit_cheater.found == {"fit": len(test)}

    class Leaky:  # the answer only in the repr
        def __init__(self, row):
            self.post_id, self.masked_text, self._row = row["post_id"], row["masked_text"], row

        def __repr__(self):
            return f"Leaky(text={self._row['text']!r})"

    assert [eval(a) for a in Cheater(None).predict_many([Leaky(r) for r in test[:3]])] == gold[:3]


def test_a_cheating_predictor_finds_no_answers_through_express_evaluate(tiny_release, capsys):
    assert main(["evaluate", "--release", tiny_release["release"], "--warehouse", tiny_release["warehouse"],
                 "--predictor", CHEATER, "--split", "test", "--no-report", "--bootstrap", "10"]) == 0
    out = json.loads(capsys.readouterr().out)
    config = json.loads((Path(out["path"]) / "config.json").read_text())
    details = config["predictor_details"]
    test, train = split_rows(tiny_release, "test"), split_rows(tiny_release, "train")
    assert details["predicted"] == len(test) == out["rows"]
    assert details["found"] == {} and out["AccL"] == 0.0 and out["VRate"] == 1.0
    assert details["item_types"] == ["Item"] and details["item_fields"] == ITEM_FIELDS
    # fitting read the train split, and only the train split
    assert details["fit_posts"] == sorted({r["post_id"] for r in train})
    assert not set(details["fit_posts"]) & {r["post_id"] for r in test}
    assert config["predictor"] == CHEATER and config["predictor_source"] == "import path"


def test_evaluating_on_the_train_split_is_refused(tiny_release, capsys):
    code = main(["evaluate", "--release", tiny_release["release"], "--warehouse", tiny_release["warehouse"],
                 "--predictor", CHEATER, "--split", "train"])
    assert code == 2 and "fitted on the train split" in capsys.readouterr().err
