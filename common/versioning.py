"""The code version written into manifests: package version plus git commit when available."""
from __future__ import annotations

import subprocess
from functools import lru_cache
from importlib import metadata
from pathlib import Path


@lru_cache(maxsize=None)
def code_version() -> str:
    try:
        version = metadata.version("express")
    except metadata.PackageNotFoundError:
        version = "0+unknown"
    root = Path(__file__).resolve().parent.parent
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                             capture_output=True, text=True, timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return version
    return f"{version}+g{sha}{'.dirty' if dirty else ''}"
