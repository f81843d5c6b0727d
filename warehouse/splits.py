"""Deterministic splits by hash of post id: all segments of a post land in the same split."""
from __future__ import annotations

import hashlib

from schemas.config import SplitConfig

SPLITS = ("train", "validation", "test")


def split_for(post_id: str, cfg: SplitConfig) -> str:
    digest = hashlib.sha256(f"{cfg.seed}:{post_id}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    if u < cfg.train:
        return "train"
    if u < cfg.train + cfg.validation:
        return "validation"
    return "test"
