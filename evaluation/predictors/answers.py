"""Structured answers: a JSON object holding exactly k emotion words, asked of a server as a
response format and, the same schema, enforced in local generation (evaluation/predictors/constrained.py).

`--answers structured` (the default) asks for {"answers": [k words]} ({"reasoning": ..., "answers":
[...]} for a setting that reasons first); `--answers free` sends the prompt alone. The prompt text
is the same either way, so the two can be compared. Servers spell the request differently: OpenAI,
vLLM and llama.cpp's llama-server take `json_schema`; llama-cpp-python's server takes
`json_object` with a `schema`. A server that refuses one spelling gets the next, once, visibly;
one that refuses all gets free text.
"""
from __future__ import annotations

from typing import Any

MODES = ("structured", "free")
WORD_CHARS = 16  # longest answer word (the longest label in the EXPRESS data has 14 letters)
# One lower-case word, bounded in the pattern itself: llama.cpp's grammar ignores maxLength beside a
# pattern, and a free string lets a small model write code or prose until the answer is cut off.
WORD_PATTERN = f"^[a-z][a-z'-]{{0,{WORD_CHARS - 1}}}$"
REASONING_CHARS = 2000  # longest reasoning before a structured answer
# response_format spellings, tried in this order; "free" sends none
FORMATS = ("json_schema", "json_object", "free")


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"--answers must be one of {', '.join(MODES)}, got '{mode}'")
    return mode


def answer_schema(k: int, reasoning: bool = False) -> dict[str, Any]:
    """A JSON schema for exactly k short words (after a bounded reasoning text, if asked)."""
    words = {"type": "array", "minItems": k, "maxItems": k,
             "items": {"type": "string", "pattern": WORD_PATTERN}}
    props: dict[str, Any] = {"answers": words}
    if reasoning:
        props = {"reasoning": {"type": "string", "maxLength": REASONING_CHARS}, "answers": words}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def response_format(spelling: str, k: int, reasoning: bool = False) -> dict[str, Any] | None:
    """The request's `response_format` in one server's spelling (None: free text)."""
    schema = answer_schema(k, reasoning)
    if spelling == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "answers", "strict": True, "schema": schema}}
    if spelling == "json_object":
        return {"type": "json_object", "schema": schema}
    return None
