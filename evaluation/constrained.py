"""Constrained decoding for hf-chat: a logits processor that lets a model write only the
structured answer of evaluation/answers.py, {"answers": ["w1", ..., "wk"]} with exactly k words
(after {"reasoning": "..."} for a setting that reasons first), then its end-of-text token.

The answer is a fixed program of segments: literal text, a word (lower-case letters, apostrophes
and hyphens, a letter first, at most WORD_CHARS: one word as scored, never a copied sentence) or
free text (any printable character but a quote or backslash), each of bounded length. A row's
state is a position in its program; at each step only tokens whose text keeps the answer inside
the program are allowed. A token may finish a literal and start the next word
or text ("sad" after `["`), or start the literal after a word (`"]`); the single-character tokens
a byte-level vocabulary has make every answer reachable.
"""
from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

from evaluation.answers import REASONING_CHARS, WORD_CHARS

LETTERS = frozenset(string.ascii_lowercase)
WORD = LETTERS | frozenset("'-")
FREE = frozenset(c for c in string.printable if c not in '"\\\n\r\t\x0b\x0c')


@dataclass(frozen=True)
class Segment:
    kind: str  # "literal", "word" or "free"
    text: str = ""  # the literal's text
    limit: int = 0  # most characters of a word or free text


def program(k: int, reasoning: bool = False) -> list[Segment]:
    segs = [Segment("literal", '{"reasoning": "'), Segment("free", limit=REASONING_CHARS),
            Segment("literal", '", "answers": ["')] if reasoning else [Segment("literal", '{"answers": ["')]
    for i in range(k):
        if i:
            segs.append(Segment("literal", '", "'))
        segs.append(Segment("word", limit=WORD_CHARS))
    return [*segs, Segment("literal", '"]}')]


def _fits(seg: Segment, text: str, used: int = 0) -> bool:
    """`text` can continue a word or free text that has `used` characters."""
    chars = WORD if seg.kind == "word" else FREE
    if not text or used + len(text) > seg.limit or not set(text) <= chars:
        return False
    return seg.kind != "word" or used > 0 or text[0] in LETTERS


class Vocabulary:
    """Each token's text and the masks that do not depend on a row's state, built once per tokenizer."""

    def __init__(self, tokenizer: Any, size: int, torch: Any) -> None:
        self.torch = torch
        n = len(tokenizer)
        self.texts = [tokenizer.decode([i]) for i in range(n)] + [""] * max(0, size - n)
        self.size = len(self.texts)
        self.lengths = torch.tensor([len(t) for t in self.texts])
        self.word = torch.tensor([bool(t) and set(t) <= WORD for t in self.texts])
        self.letter_first = torch.tensor([bool(t) and t[0] in LETTERS for t in self.texts])
        self.free = torch.tensor([bool(t) and set(t) <= FREE for t in self.texts])
        self.by_first: dict[str, list[int]] = {}
        for i, t in enumerate(self.texts):
            if t:
                self.by_first.setdefault(t[0], []).append(i)
        self._literal: dict[tuple[str, Segment | None], Any] = {}

    def literal_mask(self, rest: str, after: Segment | None) -> Any:
        """Tokens that continue the literal `rest`, or finish it and start the segment `after`."""
        key = (rest, after)
        if key not in self._literal:
            mask = self.torch.zeros(self.size, dtype=self.torch.bool)
            for i in self.by_first.get(rest[0], []):
                t = self.texts[i]
                if rest.startswith(t) or (t.startswith(rest) and after is not None and after.kind != "literal"
                                          and _fits(after, t[len(rest):])):
                    mask[i] = True
            self._literal[key] = mask
        return self._literal[key]


class JsonAnswerProcessor:
    """A transformers logits processor; `programs` holds one program per row of the batch."""

    def __init__(self, vocab: Vocabulary, programs: list[list[Segment]], eos_id: int) -> None:
        self.vocab, self.programs, self.eos_id = vocab, programs, eos_id
        self.state = [(0, 0) for _ in programs]  # (segment, characters of it written)
        self.prompt_len: int | None = None

    def _advance(self, row: int, text: str) -> None:
        """Move a row's state over the text of the token it chose (the mask made it fit)."""
        prog = self.programs[row]
        seg_i, used = self.state[row]
        while text and seg_i < len(prog):
            seg = prog[seg_i]
            if seg.kind == "literal":
                n = min(len(seg.text) - used, len(text))
            else:
                chars = WORD if seg.kind == "word" else FREE
                n = next((i for i, c in enumerate(text) if c not in chars), len(text))
            used, text = used + n, text[n:]
            if (seg.kind == "literal" and used == len(seg.text)) or (seg.kind != "literal" and text):
                seg_i, used = seg_i + 1, 0
        self.state[row] = (seg_i, used)

    def _mask(self, row: int) -> Any:
        v, torch = self.vocab, self.vocab.torch
        prog = self.programs[row]
        seg_i, used = self.state[row]
        if seg_i >= len(prog):
            mask = torch.zeros(v.size, dtype=torch.bool)
            mask[self.eos_id] = True
            return mask
        seg = prog[seg_i]
        if seg.kind == "literal":
            return v.literal_mask(seg.text[used:], prog[seg_i + 1] if seg_i + 1 < len(prog) else None)
        fits = (v.word if seg.kind == "word" else v.free) & (v.lengths <= seg.limit - used)
        if seg.kind == "word" and used == 0:
            return fits & v.letter_first
        closing = v.literal_mask(prog[seg_i + 1].text, prog[seg_i + 2] if seg_i + 2 < len(prog) else None)
        return fits | closing

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self.prompt_len is None:
            self.prompt_len = input_ids.shape[1]
        elif input_ids.shape[1] > self.prompt_len:
            for row, token in enumerate(input_ids[:, -1].tolist()):
                self._advance(row, self.vocab.texts[token] if token != self.eos_id else "")
        masks = self.vocab.torch.stack([self._mask(r) for r in range(len(self.programs))]).to(scores.device)
        return scores.masked_fill(~masks[:, : scores.shape[1]], float("-inf"))
