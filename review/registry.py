"""Which items have been exported or served: `reviews/<dataset>/items.jsonl`, keyed by item_id.

An import of bare `{"item_id", "decision"}` lines looks the items up here to copy their identity
into the ledger, so a ledger line alone is enough to find the word again in a later build.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from common.files import write_atomic
from common.jsonl import read_jsonl
from common.locking import file_lock
from review.items import ReviewItem
from review.ledger import LedgerError
from warehouse.layout import Warehouse


def registry_path(root: Path, dataset: str) -> Path:
    return Warehouse(Path(root)).review(dataset).items


def _row(item: ReviewItem) -> dict[str, Any]:
    return {"item_id": item.item_id, "dataset": item.dataset, **item.identity(), "releases": [item.release]}


def register_items(root: Path, items: Iterable[ReviewItem]) -> int:
    """Merge items into their datasets' registries (first identity kept, releases unioned)."""
    by_dataset: dict[str, list[ReviewItem]] = {}
    for it in items:
        by_dataset.setdefault(it.dataset, []).append(it)
    added = 0
    for dataset, group in by_dataset.items():
        path = registry_path(root, dataset)
        with file_lock(Warehouse(Path(root)).review(dataset).items_lock, timeout=60, holder="another review export"):
            rows = _read(path)
            for it in group:
                old = rows.get(it.item_id)
                if old is None:
                    rows[it.item_id] = _row(it)
                    added += 1
                elif it.release not in old["releases"]:
                    old["releases"].append(it.release)
            data = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows.values())
            write_atomic(path, data.encode("utf-8"))
    return added


def _read(path: Path) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return rows
    for _, row in read_jsonl(path, LedgerError):
        rows[row["item_id"]] = row
    return rows


def load_registry(root: Path, dataset: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """item_id -> its registry rows (one per dataset that holds it), over one or all datasets."""
    base = Warehouse(Path(root)).reviews
    names = [dataset] if dataset else (sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else [])
    out: dict[str, list[dict[str, Any]]] = {}
    for name in names:
        for item_id, row in _read(registry_path(root, name)).items():
            out.setdefault(item_id, []).append(row)
    return out
