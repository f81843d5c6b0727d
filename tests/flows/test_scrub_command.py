"""`express scrub`: the release's scrubber over any JSONL of {id, text}, with offsets that map back
to the input, the recipe's switches, file:line errors (exit 2, no output written) and progress
lines on long inputs. One real subprocess for the command line; the rest through the same `main`
in-process (the scrubber loads once a test process)."""
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

TEXTS = [
    {"id": 1, "text": "My sister Anna lives at 12 Elm Street, Leeds. Call her on 0176 123 4567."},
    {"id": "b", "text": "Nothing personal here, I just feel lost since March."},
    {"id": 3, "text": "I was born on 3 March 1991, mail me at jo@example.com"},
]


def express(*args: str) -> subprocess.CompletedProcess:
    """`express ARGS` as a user runs it, in its own process."""
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})


@pytest.fixture
def cli(capsys):
    """`express ARGS` through the console script's `main`, in this process: exit code and stderr."""
    from flows.cli import main

    def run(*args: str) -> subprocess.CompletedProcess:
        capsys.readouterr()
        code = main(list(args))
        said = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, said.out, said.err)
    return run


def _write(path: Path, rows, blank_line=False) -> Path:
    lines = [json.dumps(r) for r in rows]
    if blank_line:
        lines.insert(1, "")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_scrub_writes_the_scrubbed_text_and_spans_that_map_back_to_the_input(tmp_path):
    out = tmp_path / "out.jsonl"
    proc = express("scrub", "--input", str(_write(tmp_path / "in.jsonl", TEXTS, blank_line=True)), "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [1, "b", 3]  # one line per input object, in order
    assert rows[0]["text"] == "My sister [NAME] lives at [ADDRESS]. Call her on [PHONE]."
    assert rows[1]["text"] == TEXTS[1]["text"] and rows[1]["spans"] == []
    assert rows[2]["text"] == "I was born on [DOB], mail me at [EMAIL]"
    for given, row in zip(TEXTS, rows):
        text, rebuilt, at = given["text"], [], 0
        for span in row["spans"]:
            rebuilt += [text[at:span["start"]], span["placeholder"]]
            at = span["end"]
        assert "".join(rebuilt) + text[at:] == row["text"]
    assert [(s["kind"], TEXTS[0]["text"][s["start"]:s["end"]]) for s in rows[0]["spans"]] == [
        ("name", "Anna"), ("address", "12 Elm Street, Leeds"), ("phone", "0176 123 4567")]
    assert "Anna" not in out.read_text(encoding="utf-8")  # the output can be shared: no found value repeated


def test_scrub_honours_the_recipe_switches(tmp_path, cli):
    recipe = tmp_path / "r.toml"
    recipe.write_text("[privacy]\nscrub_names = false\nscrub_addresses = false\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    proc = cli("scrub", "--input", str(_write(tmp_path / "in.jsonl", TEXTS[:1])), "--output", str(out),
                   "--config", str(recipe))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["text"] == "My sister Anna lives at 12 Elm Street, Leeds. Call her on [PHONE]."


def test_a_bad_line_names_the_file_and_line_exits_2_and_writes_nothing(tmp_path, cli):
    given = tmp_path / "in.jsonl"
    given.write_text(json.dumps(TEXTS[0]) + "\n" + json.dumps({"id": 2}) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    proc = cli("scrub", "--input", str(given), "--output", str(out))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{given}:2:" in proc.stderr and "'text'" in proc.stderr
    assert not out.exists() and not list(tmp_path.glob("out.jsonl*"))
    given.write_text("{not json\n", encoding="utf-8")
    proc = cli("scrub", "--input", str(given), "--output", str(out))
    assert proc.returncode == 2 and f"{given}:1: not valid JSON" in proc.stderr
    proc = cli("scrub", "--input", str(tmp_path / "missing.jsonl"), "--output", str(out))
    assert proc.returncode == 2 and "missing.jsonl" in proc.stderr and not out.exists()


def test_long_inputs_report_their_progress(tmp_path, monkeypatch):
    from privacy import scrub_file
    from privacy.scrubber import Scrubber

    monkeypatch.setattr(scrub_file, "BATCH", 2)
    monkeypatch.setattr(scrub_file, "PROGRESS_SECONDS", 0.0)
    said: list[str] = []
    rows = [{"id": i, "text": f"Row {i}: my number is 0176 123 45{i:02d}"} for i in range(7)]
    n = scrub_file.scrub_jsonl(_write(tmp_path / "in.jsonl", rows), tmp_path / "out.jsonl",
                               Scrubber(["phone"]), progress=said.append)
    assert n == 7 and said[0].startswith("scrubbed 2 of 7 texts") and said[-1].startswith("scrubbed 6 of 7 texts")
    assert all(json.loads(line)["text"].endswith("[PHONE]") for line in (tmp_path / "out.jsonl").read_text().splitlines())


def test_a_json_error_is_said_whole_with_its_column(tmp_path, cli):
    given = tmp_path / "in.jsonl"
    given.write_text('{"id": 1, "text": "a line\tbroken"}\n', encoding="utf-8")
    proc = cli("scrub", "--input", str(given), "--output", str(tmp_path / "out.jsonl"))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"express scrub: {given}:1: not valid JSON (Invalid control character at column 26)"


def test_an_output_folder_that_does_not_exist_is_named_not_an_errno(tmp_path, cli):
    given = _write(tmp_path / "in.jsonl", TEXTS)
    proc = cli("scrub", "--input", str(given), "--output", str(tmp_path / "nowhere" / "out.jsonl"))
    assert proc.returncode == 2 and "Errno" not in proc.stderr
    assert proc.stderr.strip() == f"express scrub: {tmp_path / 'nowhere'}: no such folder (for the output " \
                                  f"{tmp_path / 'nowhere' / 'out.jsonl'})"


def test_a_byte_order_mark_before_the_first_line_is_read_past(tmp_path, cli):
    given = tmp_path / "in.jsonl"
    given.write_bytes(b"\xef\xbb\xbf" + _write(tmp_path / "plain.jsonl", TEXTS).read_bytes())
    proc = cli("scrub", "--input", str(given), "--output", str(tmp_path / "out.jsonl"))
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(line)["id"] for line in (tmp_path / "out.jsonl").read_text().splitlines()] == [1, "b", 3]


def test_the_input_is_never_overwritten_by_its_own_output(tmp_path, cli):
    given = _write(tmp_path / "in.jsonl", TEXTS)
    before = given.read_bytes()
    for output in (given, tmp_path / "." / "in.jsonl"):
        proc = cli("scrub", "--input", str(given), "--output", str(output))
        assert proc.returncode == 2 and "the output is the input file" in proc.stderr
    assert given.read_bytes() == before


def test_a_very_long_text_is_announced_before_it_is_scrubbed(tmp_path, monkeypatch):
    """One text of many characters is said (its line, its id, its length) before the wait."""
    from privacy import scrub_file
    from privacy.scrubber import Scrubber

    monkeypatch.setattr(scrub_file, "LONG_TEXT", 1_000)
    said: list[str] = []
    rows = [TEXTS[0], {"id": "long", "text": " ".join(["I feel fine, call 0176 123 4567."] * 60)}, TEXTS[2]]
    n = scrub_file.scrub_jsonl(_write(tmp_path / "in.jsonl", rows), tmp_path / "out.jsonl", Scrubber(["phone"]),
                               progress=said.append)
    assert n == 3 and said == [f"text 2 of 3 (id 'long') holds {len(rows[1]['text']):,} characters: scrubbing it "
                                "alone, in time that grows with its length"]
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["id"] for r in out] == [1, "long", 3] and out[1]["text"].count("[PHONE]") == 60


def test_a_text_that_takes_long_says_so_while_it_is_scrubbed(tmp_path, monkeypatch):
    """Inside one long text there is no batch to report at: a line comes every PROGRESS_SECONDS
    while it lasts. The scrubber here waits (at most a minute) until it has been said."""
    from privacy import scrub_file
    from privacy.scrubber import Scrubber

    monkeypatch.setattr(scrub_file, "LONG_TEXT", 1_000)
    monkeypatch.setattr(scrub_file, "PROGRESS_SECONDS", 0.05)
    said: list[str] = []
    heard = threading.Event()
    real = Scrubber(["phone"])

    class Slow:
        def settled_found(self, texts):
            if any(len(t) >= 1_000 for t in texts):
                heard.wait(60)
            return real.settled_found(texts)

    def progress(line: str) -> None:
        said.append(line)
        if "still scrubbing" in line:
            heard.set()

    rows = [TEXTS[0], {"id": "long", "text": " ".join(["I feel fine, call 0176 123 4567."] * 60)}]
    n = scrub_file.scrub_jsonl(_write(tmp_path / "in.jsonl", rows), tmp_path / "out.jsonl", Slow(), progress=progress)
    assert n == 2 and heard.is_set()
    assert any(line.startswith("text 2 of 2 (id 'long'): still scrubbing (") for line in said), said
