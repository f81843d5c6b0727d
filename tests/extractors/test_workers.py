"""`express extract --workers N` gives the same output, in input order, as one process."""
import json
import subprocess
import sys
from pathlib import Path

from extractors.jsonl import extract_jsonl

REPO = Path(__file__).resolve().parents[2]


def _inputs(path: Path, n: int = 120) -> list[dict]:
    kinds = ["I feel so guilty about item {k}.", "Nothing happened on day {k}.",
             "Feeling pretty hopeless today ({k}).", "I'm not happy with part {k}. I am scared.",
             "I’m {k} years old and Im really tired 😴."]
    rows = [{"id": k, "text": kinds[k % len(kinds)].format(k=k)} for k in range(n)]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return rows


def test_workers_output_equals_single_process(tmp_path, extractor):
    src = tmp_path / "in.jsonl"
    rows = _inputs(src)
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    extract_jsonl(src, one, extractor=extractor)
    proc = subprocess.run([sys.executable, "-m", "flows.cli", "extract", "--input", str(src),
                           "--output", str(two), "--workers", "2"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert two.read_bytes() == one.read_bytes()
    got = [json.loads(line) for line in two.read_text(encoding="utf-8").splitlines()]
    assert [g["id"] for g in got] == [r["id"] for r in rows]
    assert sum(len(g["disclosures"]) for g in got) >= 100  # the inputs really disclose
