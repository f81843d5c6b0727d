"""On-disk cache of model responses, keyed by model, messages and sampling parameters.

One JSON file per response, written whole (common/files.py), so an interrupted run leaves only
complete entries and a rerun pays only for what is missing. Entries are not fsynced: one lost to a
power cut is asked again, as a damaged one is. Keys never include the API key or the server URL:
the same model and prompt give the same answer wherever served.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from common.files import is_temp, write_atomic


def cache_key(model: str, messages: list[dict[str, str]], params: dict[str, Any]) -> str:
    blob = json.dumps({"model": model, "messages": messages, "params": params}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None  # a damaged entry is simply asked again and overwritten

    def put(self, key: str, entry: dict[str, Any]) -> None:
        write_atomic(self._path(key), json.dumps(entry, ensure_ascii=False).encode("utf-8"), fsync=False)

    def __len__(self) -> int:
        return sum(not is_temp(p) for p in self.root.glob("*/*.json")) if self.root.exists() else 0
