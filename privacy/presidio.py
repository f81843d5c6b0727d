"""Presidio, imported once without torch: every privacy module imports it through here first.

Presidio imports torch and transformers when they are installed (for recognizers we do not use):
15-20 s per process here. Imported with both hidden, its optional imports fall back."""
from __future__ import annotations

from common.hidden_imports import hidden

with hidden("torch", "transformers"):
    import presidio_analyzer.predefined_recognizers  # noqa: F401
    import presidio_anonymizer  # noqa: F401
