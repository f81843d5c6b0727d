"""Collapse a masked surface word into its vocabulary label.

First version: the label is the lower-cased surface word, as EXPRESS releases it (no variants
merged). The canonical vocabulary (issue #4) replaces this mapping with a data file.
"""
from __future__ import annotations


def label_for(surface: str) -> str:
    return " ".join(surface.lower().split())
