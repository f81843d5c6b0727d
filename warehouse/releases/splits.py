"""Deterministic splits by hash of post id: all segments of a post land in the same split."""
from __future__ import annotations

import hashlib

from schemas.config import SplitConfig

SPLITS = ("train", "validation", "test")


def split_for(post_id: str, cfg: SplitConfig) -> str:
    if cfg.test_only:
        return "test"
    digest = hashlib.sha256(f"{cfg.seed}:{post_id}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    if u < cfg.train:
        return "train"
    if u < cfg.train + cfg.validation:
        return "validation"
    return "test"


def splits_for_config(cfg: SplitConfig) -> tuple[str, ...]:
    """The split files a release has: all three, or only `test` in the paper's test-only mode."""
    return ("test",) if cfg.test_only else SPLITS
