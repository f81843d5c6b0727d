"""The demo release as the build published it when this file was last written: the bytes of its
data files and run tables, and its manifest without what changes from run to run (times, paths,
code version). `test_release_bytes.py` compares a fresh build with it, so a refactor that changes
what is published cannot land unnoticed. A change that means to change the release rewrites it:

    .venv/bin/python -m tests.pipeline.golden --write

and its commit says why the release changed."""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).parent / "data" / "demo_release.json"
DEMO_POSTS = 800  # the demo corpus of tests/conftest.py
VOLATILE = {"created", "code_version", "run_id"}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def quarantine_digest(path: Path) -> str:
    """The quarantine's rows, with each input named by its file name: its rows point at the input
    by path, which differs from one machine to the next."""
    import pyarrow.parquet as pq

    rows = pq.read_table(path).to_pylist()
    for row in rows:
        row["source_file"] = Path(row["source_file"]).name if row["source_file"] else None
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def describe(manifest_path: str | Path, run_dir: Path | None = None, quarantine_dir: Path | None = None) -> dict[str, Any]:
    """What must not change: file hashes (release, run tables, quarantine) and the stable manifest."""
    m = json.loads(Path(manifest_path).read_text())
    release = Path(manifest_path).parent
    stable = {k: v for k, v in m.items() if k not in VOLATILE}
    stable["inputs"] = [i["sha256"] for i in m["inputs"]]
    gate = stable.pop("gate")
    stable["gate"] = {"success": gate["success"], "suites": gate["suites"], "failures": gate["failures"],
                      "parameters": gate["parameters"],
                      "pii": {k: v for k, v in gate["pii"].items() if k not in ("seconds",)}}
    files = {f"release/{p.relative_to(release)}": sha256(p) for p in sorted((release / "data").glob("*.parquet"))}
    if run_dir is not None:
        files |= {f"run/{name}": sha256(run_dir / name) for name in ("examples.parquet", "disclosures.parquet")}
    if quarantine_dir is not None:
        files |= {f"quarantine/{name}": quarantine_digest(quarantine_dir / name)
                  for name in ("ingest.parquet", "extract.parquet")}
    return {"files": files, "manifest": stable}


def expected() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text())


def _write() -> None:
    """Build the demo corpus as the tests do and store what it published."""
    import tempfile

    from flows import prefect_api
    from flows.environment import set_defaults
    from sources.demo import DemoSpec, write_demo_dump
    from tests.builds import build

    set_defaults()
    prefect_api.ensure()
    with tempfile.TemporaryDirectory() as d:
        dump = write_demo_dump(Path(d) / "in", DemoSpec(posts=DEMO_POSTS))
        repo = Path(__file__).resolve().parents[2]
        built = build([str(dump)], str(Path(d) / "wh"), str(repo / "configs" / "demo.toml"), workers=0)
        run = Path(built["extract"]["examples"]).parent
        out = {"demo_dump_sha256": sha256(dump), **describe(built["release"]["manifest"], run,
                                                             Path(built["ingest"]["quarantine"]).parent)}
    GOLDEN.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")


if __name__ == "__main__" and "--write" in sys.argv:
    _write()
