"""The acceptance model after the rules: its data file, its features, what it drops and where
the drops are accounted for (disclosure field, explain, funnel), the on/off switch, training."""
import json
import random
from pathlib import Path

import pytest

from common.checksums import sha256_file
from extractors import acceptance_training as tr
from extractors.acceptance import (
    FEATURE_SET,
    NOT_ACCEPTED,
    AcceptanceModel,
    declared_model,
    describe,
    load_model,
    resolve,
)
from extractors.disclosures import DisclosureExtractor
from extractors.examples import Hooks, build_examples
from extractors.jsonl import extract_jsonl
from flows.cli import main as cli
from schemas.config import ConfigError, ExtractConfig, recipe_from_dict
from schemas.funnel import Funnel
from schemas.records import RawPost

FILLER = ("We moved to a new city last spring and the first months were a blur of boxes and paperwork. "
          "My partner started a new job, I kept working from home, and the neighbours are friendly. ")


def _rejecting(word: str) -> AcceptanceModel:
    """A model that keeps every hit but those of one label (weights by hand, threshold 0.5)."""
    return AcceptanceModel("test-model", {f"label={word}": -20.0}, 5.0, 0.5)


def test_shipped_model_file_matches_its_declared_version_and_sha256():
    declared = declared_model()
    model = load_model()
    assert model.path.name == declared["file"] and model.version == declared["version"]
    assert sha256_file(model.path) == declared["sha256"] == model.sha256
    assert model.meta["feature_set"] == FEATURE_SET


def test_shipped_model_records_its_training_data_features_threshold_and_fold_figures():
    model = load_model()
    data = json.loads(model.path.read_text(encoding="utf-8"))
    assert data["training_data"]["file"] == "segments_dev.jsonl"
    assert len(data["training_data"]["sha256"]) == 64
    assert len(data["features"]) == len(data["coefficients"]) > 50
    assert 0.0 < data["threshold"] < 1.0
    for name in ("train_A_test_B", "train_B_test_A", "pooled"):
        assert {"rules", "with_model"} <= set(data["folds"][name])
    # single words of a text only as modifiers (closed in practice: seen in >= 3 posts), no phrases
    assert all(len(f.split("=", 1)[1].split()) <= 3 for f in data["features"] if "=" in f)


def test_probability_is_the_scikit_learn_logistic_regression_it_was_fitted_as():
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    rng = random.Random(3)
    names = [f"f{k}" for k in range(12)]
    feats = [tuple(rng.sample(names, rng.randint(1, 5))) for _ in range(200)]
    labels = [("f1" in fs) != (rng.random() < 0.1) for fs in feats]
    weights, intercept = tr.fit(feats, labels, c=1.0)
    vec = DictVectorizer()
    x = vec.fit_transform([dict.fromkeys(fs, 1.0) for fs in feats])
    with threadpool_limits(1):
        sk = LogisticRegression(C=1.0, max_iter=5000).fit(x, labels).predict_proba(x)[:, 1]
    ours = AcceptanceModel("t", weights, intercept, 0.5)
    assert max(abs(ours.probability(fs) - p) for fs, p in zip(feats, sk)) < 1e-9


def test_hit_features_name_family_trigger_word_modifiers_follower_and_nrc_dims(rules_extractor):
    (c,) = next(rules_extractor.candidates(["Honestly, I'm so scared of the dark."]))
    f = set(c.features)
    assert {"family=family2", "trigger=family2|i'm", "label=scared", "family|label=family2|scared", "tag=JJ",
            "mod=so", "mods=1", "next=of", "family|next=family2|of", "prev=comma", "dim=fear",
            "first_sentence"} <= f
    assert "negated" not in f
    (n,) = next(rules_extractor.candidates([FILLER + "Since then I never felt happy, at all."]))
    assert {"family=family1", "trigger=family1|i+felt", "negated", "gap=never", "gaps=1", "next=comma",
            "prev=then", "later_sentence"} <= set(n.features)


def test_someone_else_between_i_and_felt_is_a_feature_the_model_weighs(rules_extractor):
    """EXPRESS's family 1 takes any three words between "I" and felt ("I think she felt sad"); the
    rules find those, and `gap_subject` tells the model that the feeling may be someone else's."""
    (other,) = next(rules_extractor.candidates([FILLER + "I think she felt sad about it."]))
    (own,) = next(rules_extractor.candidates([FILLER + "I really felt sad about it."]))
    assert "gap_subject" in other.features and "gap_subject" not in own.features
    assert "gap_subject" in load_model().weights


def test_acceptance_off_keeps_every_rule_hit_and_on_keeps_those_above_the_threshold(rules_extractor, extractor):
    texts = [FILLER + s for s in ("I feel so guilty about it.", "I am alone at home tonight.",
                                  "I was careful with the money.", "Feeling pretty hopeless today.")]
    alone = list(rules_extractor.extract_many(texts))
    scored = list(extractor.audited(texts))
    assert all(d.acceptance is None for ds in alone for d in ds)
    for rules_found, (kept, dropped) in zip(alone, scored, strict=True):
        assert sorted((d.start, d.end) for d in kept + dropped) == [(d.start, d.end) for d in rules_found]
        assert all(d.acceptance >= extractor.model.threshold for d in kept)
        assert all(d.acceptance < extractor.model.threshold for d in dropped)
    assert resolve("off") is None and resolve("on") is load_model()
    with pytest.raises(ValueError, match="acceptance"):
        DisclosureExtractor(acceptance="maybe")


def test_a_dropped_hit_keeps_its_rule_and_probability_and_explain_lists_it(rules_extractor):
    ex = DisclosureExtractor(nlp=rules_extractor.nlp, acceptance=_rejecting("calm"))
    text = FILLER + "I am calm now. I feel so sad about it."
    (kept,) = ex.extract(text)
    assert kept.surface == "sad" and kept.rule == "family1:i+feel:after_modifiers" and kept.acceptance > 0.99
    listed = {d.surface: d for d in ex.explain(text)}
    assert listed["calm"].rule == f"family2:i am:direct:{NOT_ACCEPTED}" and listed["calm"].acceptance < 0.5
    assert listed["sad"].rule == kept.rule


def test_funnel_drops_posts_whose_hits_were_all_rejected_as_not_accepted_and_counts_hits(rules_extractor):
    ex = DisclosureExtractor(nlp=rules_extractor.nlp, acceptance=_rejecting("calm"))
    posts = [RawPost(id="a", text=FILLER + "I am calm about it."),
             RawPost(id="b", text=FILLER + "I am calm. I feel so sad about it."),
             RawPost(id="c", text=FILLER + "Nothing else to say."),
             RawPost(id="d", text=FILLER + "I'm not happy with it.")]
    funnel, hits = Funnel(), __import__("collections").Counter()
    seen = {}
    out = list(build_examples(posts, ex, ExtractConfig(), funnel, hooks=Hooks(
        hit_counts=hits, on_disclosures=lambda p, ds: seen.setdefault(p.id, [d.surface for d in ds]))))
    assert [e.post_id for e in out] == ["b"] and out[0].surfaces == ["sad"]
    assert funnel.to_dict() == {"read": 4, "kept": 1, "malformed": 0,
                                "dropped": {NOT_ACCEPTED: 1, "no_disclosure": 1, "only_negated": 1}}
    assert funnel.balanced()
    assert hits == {"found": 4, "accepted": 2, NOT_ACCEPTED: 2}
    assert seen == {"a": [], "b": ["sad"], "c": [], "d": ["happy"]}


def test_recipe_option_switches_acceptance_and_describe_gives_the_manifest_entry():
    assert recipe_from_dict({}).extract.acceptance == "on"
    assert recipe_from_dict({"extract": {"acceptance": "off"}}).extract.acceptance == "off"
    with pytest.raises(ConfigError, match=r"\[extract\].*acceptance"):
        recipe_from_dict({"extract": {"acceptance": "maybe"}})
    assert describe(ExtractConfig(acceptance="off")) is None
    entry = describe(ExtractConfig())
    declared = declared_model()
    assert entry["version"] == declared["version"] and entry["sha256"] == declared["sha256"]
    assert entry["file"] == declared["file"] and len(entry["training_data_sha256"]) == 64


def test_extract_output_keeps_rule_and_adds_acceptance(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": 1, "text": FILLER + "I feel so guilty about it."}) + "\n", encoding="utf-8")
    rows = {}
    for setting in ("on", "off"):
        out = tmp_path / f"{setting}.jsonl"
        extract_jsonl(src, out, acceptance=setting)
        (rows[setting],) = json.loads(out.read_text(encoding="utf-8"))["disclosures"]
    assert rows["off"]["acceptance"] is None and 0.5 < rows["on"]["acceptance"] <= 1.0
    assert rows["on"]["rule"] == rows["off"]["rule"] == "family1:i+feel:after_modifiers"


def test_a_builds_disclosures_table_stores_what_extract_finds_in_the_same_posts(demo_build, tmp_path):
    """The run's disclosures.parquet of the real demo build, against `extract` on the texts of the
    posts it was built from: the same spans, rules and acceptance probabilities."""
    import pyarrow.parquet as pq

    run = Path(demo_build["release"]["path"]).parents[1] / "runs" / demo_build["run_id"]
    stored = {r["post_id"]: r["disclosures"] for r in pq.read_table(run / "disclosures.parquet").to_pylist()}
    texts = {r["id"]: r["text"] for f in demo_build["ingest"]["raw_posts"]
             for r in pq.read_table(f, columns=["id", "text"]).to_pylist()}
    sample = sorted(pid for pid, ds in stored.items() if ds)[:40]
    assert len(sample) == 40 and any(d["acceptance"] < 1.0 for pid in sample for d in stored[pid])
    src = _write(tmp_path / "in.jsonl", [{"id": pid, "text": texts[pid]} for pid in sample])
    extract_jsonl(src, tmp_path / "out.jsonl")
    found = {r["id"]: r["disclosures"] for r in map(json.loads, (tmp_path / "out.jsonl").read_text().splitlines())}
    pick = lambda ds: [(d["start"], d["end"], d["surface"], d["rule"], d["negated"], d["acceptance"]) for d in ds]
    assert {pid: pick(stored[pid]) for pid in sample} == {pid: pick(found[pid]) for pid in sample}
    assert all(texts[pid][d["start"]:d["end"]] == d["surface"] for pid in sample for d in stored[pid])


# -- training, on fixtures of our own: "I am calm/alone/strong" are hits a reviewer drops


KEEP = ["sad", "guilty", "scared", "angry", "lonely", "anxious", "tired", "ashamed"]
DROP = ["calm", "alone", "strong", "comfortable"]


def _fixture_rows(n_posts: int = 30, seed: int = 5) -> list[dict]:
    """Posts of realistic length with three disclosures; gold masks KEEP words, never DROP words."""
    rng = random.Random(seed)
    rows = []
    for k in range(n_posts):
        parts, spans, text = [], [], ""
        sentences = [FILLER, f"I feel so {rng.choice(KEEP)} about what happened. ", FILLER,
                     f"I am {rng.choice(DROP)} most evenings. ", f"I'm really {rng.choice(KEEP)} of the future. ",
                     FILLER]
        for s in sentences:
            for w in KEEP:
                at = s.find(f" {w} ")
                if at >= 0:
                    spans.append({"start": len(text) + at + 1, "end": len(text) + at + 1 + len(w)})
            text += s
            parts.append(s)
        rows.append({"post_id": f"p{k}", "segment_index": 0, "text": text.strip(), "gold_spans": spans})
    return rows


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_train_acceptance_writes_a_versioned_model_that_learns_the_review(tmp_path, rules_extractor, capsys):
    dev = _write(tmp_path / "segments_dev.jsonl", _fixture_rows())
    out = tmp_path / "models"
    assert cli(["train-acceptance", "--dev", str(dev), "--out", str(out), "--version", "acceptance-v7"]) == 0
    assert "train_A_test_B" in capsys.readouterr().out
    path = out / "acceptance-v7.json"
    toml = (out / "acceptance.toml").read_text(encoding="utf-8")
    assert f'sha256 = "{sha256_file(path)}"' in toml and 'version = "acceptance-v7"' in toml
    model = load_model(path)
    assert model.meta["training_data"]["sha256"] == sha256_file(dev)
    ex = DisclosureExtractor(nlp=rules_extractor.nlp, acceptance=model)
    kept, dropped = next(ex.audited([FILLER + "I am alone most evenings. I feel so sad about it."]))
    assert [d.surface for d in kept] == ["sad"] and [d.surface for d in dropped] == ["alone"]
    # a shipped version is never replaced silently; the next version is numbered on
    assert cli(["train-acceptance", "--dev", str(dev), "--out", str(out), "--version", "acceptance-v7"]) == 2
    assert "exists" in capsys.readouterr().err
    assert tr.next_version(out) == "acceptance-v8"
    # --force replaces it; --review adds reviewers' decisions: here they kept "I am calm" every time
    (calm,) = next(rules_extractor.candidates([FILLER + "I am calm most evenings."]))
    assert not model.accepts(model.probability(calm.features))
    review = _write(tmp_path / "review.jsonl", [{"features": list(calm.features), "accepted": True}] * 200)
    assert cli(["train-acceptance", "--dev", str(dev), "--out", str(out), "--version", "acceptance-v7", "--force",
                "--review", str(review)]) == 0
    assert "200 review rows" in capsys.readouterr().out
    retrained = load_model(path)
    assert retrained.meta["training_data"]["review_rows"] == 200 and retrained.sha256 != model.sha256
    assert retrained.probability(calm.features) > model.probability(calm.features) + 0.5


def test_review_decisions_are_training_rows_too(tmp_path, rules_extractor):
    rows = _fixture_rows()
    ts = tr.labelled_hits(rows, rules_extractor)
    (c,) = next(rules_extractor.candidates([FILLER + "I am calm most evenings."]))
    before = tr.fold_model(ts)
    ts.extra.extend([(c.features, True)] * 200)  # reviewers kept "I am calm" every time
    after = tr.fold_model(ts)
    assert not before.accepts(before.probability(c.features))
    assert after.probability(c.features) > before.probability(c.features) + 0.5
    assert tr.train(ts, "acceptance-v2")["training_data"]["review_rows"] == 200
    review = _write(tmp_path / "review.jsonl", [{"features": list(c.features), "accepted": True}])
    assert tr.read_review(review) == [(c.features, True)]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"features": ["a"], "accepted": true}\n{"features": "a"}\n', encoding="utf-8")
    with pytest.raises(tr.TrainingDataError, match=r"bad.jsonl:2"):
        tr.read_review(bad)


def test_training_refuses_a_test_split_and_names_a_bad_line(tmp_path, capsys):
    hidden = _write(tmp_path / "segments_test.jsonl", _fixture_rows(2))
    assert cli(["train-acceptance", "--dev", str(hidden), "--out", str(tmp_path)]) == 2
    assert "refusing" in capsys.readouterr().err
    bad = tmp_path / "segments_dev.jsonl"
    bad.write_text(json.dumps(_fixture_rows(1)[0]) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(tr.TrainingDataError, match=r"segments_dev.jsonl:2"):
        tr.read_dev(bad)
    assert not list(tmp_path.glob("acceptance-*.json"))


def test_threshold_keeps_the_asked_share_of_true_hits():
    hits = [tr.LabelledHit(f"p{k}", (), k % 4 != 0) for k in range(100)]
    probs = [k / 100 for k in range(100)]
    t = tr.choose_threshold(hits, probs, 0.9)
    kept_true = sum(1 for h, p in zip(hits, probs) if h.gold and p >= t)
    assert kept_true >= 0.9 * 75 and sum(1 for h, p in zip(hits, probs) if h.gold and p >= t + 0.01) < 0.9 * 75
