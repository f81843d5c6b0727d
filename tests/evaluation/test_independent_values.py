"""Our divergences and scores against values computed another way: scipy, and a table worked by hand."""
import csv
import json
import random
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy

from evaluation.scoring.analysis import entropy_bits, jensen_shannon
from flows.cli import main
from tests.evaluation.conftest import tiny_examples
from warehouse.gate.suite import js_divergence

pytestmark = pytest.mark.slow  # publishes releases through the gate (tests/conftest.py)

LABELS = ["sad", "happy", "angry", "tired", "lonely", "scared", "grateful", "anxious"]


def scipy_js(p: Counter, q: Counter) -> float:
    keys = sorted(set(p) | set(q))
    return float(jensenshannon([p[k] for k in keys], [q[k] for k in keys], base=2) ** 2)


def random_tables(n: int = 60) -> list[tuple[Counter, Counter]]:
    rng = random.Random(20)
    pairs = []
    for _ in range(n):
        p = Counter({w: rng.randint(1, 50) for w in rng.sample(LABELS, rng.randint(1, len(LABELS)))})
        q = Counter({w: rng.randint(1, 50) for w in rng.sample(LABELS, rng.randint(1, len(LABELS)))})
        pairs.append((p, q))
    return pairs + [(Counter(sad=3), Counter(happy=5)), (Counter(sad=2, happy=2), Counter(sad=7, happy=7))]


@pytest.mark.parametrize("ours", [js_divergence, jensen_shannon], ids=["gate", "analysis"])
def test_js_divergence_matches_scipy_including_disjoint_and_identical_tables(ours):
    for p, q in random_tables():
        assert ours(p, q) == pytest.approx(scipy_js(p, q), abs=1e-12)
    assert ours(Counter(sad=3), Counter(happy=5)) == pytest.approx(1.0)
    assert ours(Counter(sad=2, happy=2), Counter(sad=7, happy=7)) == pytest.approx(0.0, abs=1e-12)


def test_entropy_matches_scipy():
    for p, _ in random_tables():
        assert entropy_bits(p) == pytest.approx(entropy(list(p.values()), base=2), abs=1e-12)


def _relabelled(rows: list[dict], every: int, word: str) -> list[dict]:
    """Posts whose index is a multiple of `every` get `word` for every mask (text filled in again)."""
    out = []
    for row in rows:
        row = dict(row)
        if int(row["post_id"][1:]) % every == 0:
            k = row["masked_text"].count("<mask>")
            row["surfaces"] = row["labels"] = [word] * k
            text = row["masked_text"]
            for _ in range(k):
                text = text.replace("<mask>", word, 1)
            row["text"] = text
        out.append(row)
    return out


def _publish(root: Path, rows: list[dict], gate: bool):
    from common.parquet import ParquetSink
    from schemas.config import recipe_from_dict
    from schemas.records import EXAMPLES
    from warehouse.layout import Warehouse
    from warehouse.releases.publish import publish_release

    path = root / f"examples-{len(list(root.glob('examples-*')))}.parquet"
    with ParquetSink(path, EXAMPLES) as sink:
        for row in rows:
            sink.write(row)
    recipe = recipe_from_dict({"dataset": {"name": "tiny"}, "gate": {"enabled": gate, "data_docs": False, "max_label_share": 1.0, "max_js_divergence": 1.0},
                               "splits": {"train": 0.6, "validation": 0.1, "test": 0.3, "seed": "tiny"}})
    return publish_release(path, Warehouse(root), recipe, {})


def test_express_diff_and_the_gate_drift_match_scipy(tmp_path, capsys):
    a = _publish(tmp_path, tiny_examples(48), gate=False)  # the gate of v2 reads its parent's files
    b = _publish(tmp_path, _relabelled(tiny_examples(60), every=5, word="tired"), gate=True)

    def counts(release) -> tuple[Counter, set]:
        rows = [r for f in sorted((release.path / "data").glob("*.parquet")) for r in pq.read_table(f).to_pylist()]
        return Counter(w for r in rows for w in r["labels"]), {(r["post_id"], r["segment_index"]) for r in rows}

    (ca, ka), (cb, kb) = counts(a), counts(b)
    expected = scipy_js(ca, cb)
    assert 0.01 < expected < 0.5
    assert main(["diff", "v1", "v2", "--warehouse", str(tmp_path), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["labels"]["js_divergence"] == pytest.approx(expected, abs=1e-12)
    assert d["labels"]["masks_a"] == sum(ca.values()) and d["labels"]["masks_b"] == sum(cb.values())
    assert sum(s["added"] for s in d["splits"].values()) == len(kb - ka)
    gate = json.loads((b.path / "manifest.json").read_text())["gate"]
    assert gate["parent"] == "v1" and gate["label_js_divergence"] == pytest.approx(expected, abs=1e-12)


# Hand-worked: the ten dimensions are anger anticipation disgust fear joy sadness surprise trust positive negative.
VECTORS = {  # from schemas/data/lexicon-decomposition.csv, checked below
    "sad": (0, 0, 0, 0, 0, 1, 0, 0, 0, 1), "tired": (0, 0, 0, 0, 0, 1, 0, 0, 0, 1),
    "happy": (0, 1, 0, 0, 1, 0, 0, 0, 1, 0), "grateful": (0, 0, 0, 0, 1, 0, 0, 1, 1, 0),
    "angry": (1, 0, 0, 0, 0, 0, 0, 0, 0, 1), "afraid": (1, 0, 0, 1, 0, 0, 0, 0, 0, 1),
    "upset": (1, 0, 0, 0, 0, 1, 0, 0, 0, 1), "lonely": (1, 0, 1, 1, 0, 1, 0, 0, 0, 1),
}
ROWS = [  # gold, raw answer; per mask: word hit, vector hit, F1 (2tp / (2tp + fp + fn))
    (["sad"], "['sad']"),                                  # 1, 1, 1
    (["sad", "happy"], "['tired', 'grateful']"),           # 0, 1, 1 | 0, 0, 4/6 (tp joy+positive, fp trust, fn anticipation)
    (["angry", "upset", "lonely"], "angry, afraid"),       # two words for three masks: invalid, 0 hits
    (["upset"], '["blorp"]'),                              # 0, 0, 0 (zero vector: tp 0, fn 3)
    (["lonely", "afraid"], 'Answer: ["Lonely", "angry"]'),  # 1, 1, 1 | 0, 0, 4/5 (tp anger+negative, fn fear)
]
# masks 9; word hits 2; vector hits 3; valid rows 4 of 5 with 6 masks; F1 sum 1 + 1 + 2/3 + 0 + 1 + 4/5 = 67/15
HAND = {"AccL": 2 / 9, "AccV": 3 / 9, "F1V": 67 / 15 / 6, "VRate": 4 / 5, "rows": 5, "masks": 9}


def test_the_hand_worked_vectors_are_the_shipped_ones():
    csv_path = Path(__file__).resolve().parents[2] / "schemas" / "data" / "lexicon-decomposition.csv"
    with open(csv_path, newline="") as fh:
        table = {r["word"]: tuple(int(float(v)) for k, v in r.items() if k != "word") for r in csv.DictReader(fh)}
    assert {w: table[w] for w in VECTORS} == VECTORS and "blorp" not in table


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_express_score_matches_a_hand_computed_table(tmp_path, capsys, fmt):
    path = tmp_path / f"preds.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps({"labels": g, "output": o}) + "\n" for g, o in ROWS))
    else:  # the EXPRESS release's CSV: labels as a Python list string
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["labels", "output"])
            w.writerows([repr(g), o] for g, o in ROWS)
    assert main(["score", "--predictions", str(path)]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got.keys() == HAND.keys()
    for key, value in HAND.items():
        assert got[key] == pytest.approx(value, abs=1e-12), key
