"""hf-fill-mask really runs: a tiny masked LM (random weights from a config, a WordPiece tokenizer
trained with `tokenizers` on our demo corpus) saved to a temporary folder, evaluated through the CLI.
Nothing is downloaded (HF_HUB_OFFLINE=1 in tests/conftest.py)."""
import json
import sys
from pathlib import Path

import pytest

from evaluation.predictors.base import Item, PredictorOptions
from flows.cli import main

pytestmark = pytest.mark.slow  # loads a transformers model (tests/conftest.py)

WINDOW = 64  # the tiny model's positions: many demo posts are longer, so windows are exercised
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


@pytest.fixture(scope="module")
def tiny_mlm(tmp_path_factory) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertForMaskedLM, PreTrainedTokenizerFast

    from sources.demo import DemoSpec, demo_records

    texts = [f"{r['title']} {r['selftext']}" for r in demo_records(DemoSpec(posts=300)) if isinstance(r, dict)]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok.train_from_iterator(texts, trainers.WordPieceTrainer(vocab_size=1000, special_tokens=SPECIALS))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    folder = tmp_path_factory.mktemp("tiny-mlm")
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                            sep_token="[SEP]", mask_token="[MASK]", model_max_length=WINDOW).save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tok.get_vocab_size(), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=WINDOW, initializer_range=0.5)
    BertForMaskedLM(config).save_pretrained(folder)
    return folder


def test_hf_fill_mask_runs_through_the_cli_on_the_demo_release(demo_build, tiny_mlm, capsys):
    rel = f"{demo_build['release']['dataset']}/{demo_build['release']['version']}"
    outs = []
    for _ in range(2):
        assert main(["evaluate", "--release", rel, "--warehouse", demo_build["warehouse"], "--predictor", "hf-fill-mask",
                     "--model", str(tiny_mlm), "--top-k", "4", "--limit", "20", "--no-report", "--bootstrap", "10"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    runs = [[json.loads(line) for line in (Path(o["path"]) / "predictions.jsonl").read_text().splitlines()] for o in outs]
    assert runs[0] == runs[1]  # deterministic: same model, same answers, same ranks
    preds = runs[0]
    assert len(preds) == 20 and outs[0]["VRate"] == 1.0
    assert any(len(p["surfaces"]) > 1 for p in preds)  # multi-mask rows are among them
    for p in preds:
        assert len(p["ranked"]) == len(p["parsed"]) == len(p["surfaces"])  # one answer and one ranking per mask
        assert all(len(r) == 4 for r in p["ranked"]) and [r[0] for r in p["ranked"]] == p["parsed"]
    config = json.loads((Path(outs[0]["path"]) / "config.json").read_text())
    details = config["predictor_details"]
    assert details["model_type"] == "bert" and details["window"] == WINDOW
    assert details["windowed_texts"] > 0  # realistic posts are longer than the window: every mask still answered
    analysis = json.loads((Path(outs[0]["path"]) / "analysis.json").read_text())
    assert analysis["top_k"] is not None and analysis["top_k"]["1"] <= analysis["top_k"]["3"]


def test_fill_mask_ranks_are_the_transformers_pipeline_ranks(tiny_mlm):
    from transformers import pipeline

    from evaluation.predictors.fill_mask import FillMaskPredictor

    text = "I feel so <mask> about the exam, and later I was <mask> again."
    ours = FillMaskPredictor(PredictorOptions(model=str(tiny_mlm), top_k=5)).ranked(Item.from_row({"post_id": "x", "masked_text": text}))
    theirs = pipeline("fill-mask", model=str(tiny_mlm), top_k=5)(text.replace("<mask>", "[MASK]"))
    assert ours == [[c["token_str"].strip() for c in per_mask] for per_mask in theirs]
    assert len(ours) == 2 and all(len(r) == 5 and len(set(r)) == 5 for r in ours)


def test_fill_mask_without_the_extra_names_it(monkeypatch):
    from evaluation.predictors.registry import get_predictor

    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(ImportError, match=r"pip install -c constraints.txt -e '\.\[hf\]'"):
        get_predictor("hf-fill-mask", PredictorOptions(model="/nonexistent"))
