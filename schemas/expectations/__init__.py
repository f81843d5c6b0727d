"""Quality-gate expectation suites as versioned JSON data; this module only finds and reads them."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

SUITES_DIR = Path(__file__).parent
SUITE_FILES = ("examples.json", "labels.json", "distribution.json", "drift.json")


def load_suite(path: str | Path) -> dict[str, Any]:
    """A suite file: name, version, table (which computed table it checks) and expectations."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}:{exc.lineno}: invalid JSON: {exc.msg}") from exc
    for key in ("name", "version", "table", "expectations"):
        if key not in data:
            raise ValueError(f"{p}: suite is missing '{key}'")
    data["sha256"] = hashlib.sha256(p.read_bytes()).hexdigest()
    return data


def load_suites(directory: str | Path | None = None) -> list[dict[str, Any]]:
    d = Path(directory) if directory else SUITES_DIR
    return [load_suite(d / name) for name in SUITE_FILES]


def pii_check(directory: str | Path | None = None) -> dict[str, Any]:
    """How the gate looks for PII (pii.json): which columns, and how many rows get the name check."""
    p = (Path(directory) if directory else SUITES_DIR) / "pii.json"
    data = json.loads(p.read_text(encoding="utf-8"))
    data["sha256"] = hashlib.sha256(p.read_bytes()).hexdigest()
    return data
