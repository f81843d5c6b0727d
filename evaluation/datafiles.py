"""The evaluation stage's versioned TOML data files (prompts, knowledge cutoffs, probe settings),
read in one place: every error names the file, and every file carries a version and a sha256 that
runs store."""
from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path
from typing import Any

from schemas.config import ConfigError

DATA_DIR = Path(__file__).resolve().parent / "data"  # prompts, cutoffs, probe settings, the lm-eval helper


def read_data_file(path: Path) -> tuple[dict[str, Any], str]:
    """(the file's tables, its sha256); a missing or unreadable file, or one without a version, is an error."""
    try:
        raw = path.read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    if not isinstance(data.get("version"), str) or not data["version"]:
        raise ConfigError(f"{path}: needs a non-empty `version`")
    return data, hashlib.sha256(raw).hexdigest()
