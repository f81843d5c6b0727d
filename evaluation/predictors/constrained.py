"""Constrained decoding for hf-chat: llguidance compiles the JSON schema a server gets
(evaluation/predictors/answers.py) against the model's tokenizer, and a logits processor lets each row write
only tokens that keep its answer inside that schema, then its end-of-text token. hf-chat and a
server are held to one definition of a valid answer; why llguidance: docs/real-models.md.
"""
from __future__ import annotations

from typing import Any

import llguidance
import llguidance.hf
import llguidance.numpy
import torch

from evaluation.predictors.answers import answer_schema

# json.dumps's separators (the shape the prompts show) and no other whitespace: free whitespace
# would let a model pad its answer with blanks until the token budget cuts it off. Every escape a
# JSON string may hold (json.dumps writes "\u00ef"), each counted as one character of maxLength.
JSON_OPTIONS: dict[str, Any] = {"item_separator": ", ", "key_separator": ": ", "whitespace_flexible": False,
                                "json_allow_general_unicode_escapes": True}
BITS = torch.arange(32, dtype=torch.int32)


class AnswerGrammar:
    """The model's tokenizer as llguidance reads it, and the answer schemas compiled for it;
    built once per model (reading the tokenizer is the costly part)."""

    def __init__(self, tokenizer: Any, vocab_size: int, eos_id: int) -> None:
        self.tokenizer = llguidance.hf.from_tokenizer(tokenizer, n_vocab=vocab_size, eos_token=eos_id)
        self.vocab_size, self.eos_id = vocab_size, eos_id
        self._grammars: dict[tuple[int, bool], str] = {}

    def matcher(self, k: int, reasoning: bool = False) -> llguidance.LLMatcher:
        """A fresh matcher of answer_schema(k, reasoning), the schema the servers get."""
        key = (k, reasoning)
        if key not in self._grammars:
            self._grammars[key] = llguidance.LLMatcher.grammar_from_json_schema(answer_schema(k, reasoning),
                                                                                overrides=JSON_OPTIONS)
        matcher = llguidance.LLMatcher(self.tokenizer, self._grammars[key], log_level=0)
        if matcher.is_error():
            raise ValueError(f"llguidance cannot compile the answer schema (k={k}): {matcher.get_error()}")
        return matcher


class SchemaLogitsProcessor:
    """A transformers logits processor: row i writes only what the schema for ks[i] words accepts."""

    def __init__(self, grammar: AnswerGrammar, ks: list[int], reasoning: bool = False) -> None:
        self.grammar = grammar
        self.matchers = [grammar.matcher(k, reasoning) for k in ks]
        self.ended = [False] * len(ks)
        self.bitmask = llguidance.numpy.allocate_token_bitmask(len(ks), grammar.vocab_size)
        self.started = False

    def consume(self, tokens: list[int]) -> None:
        """Move each row's matcher over the token it chose; a row that ended ignores the padding after."""
        for row, token in enumerate(tokens):
            if self.ended[row]:
                continue
            if not self.matchers[row].consume_token(token):
                raise RuntimeError(f"llguidance refused token {token} of row {row} after allowing it: "
                                   f"{self.matchers[row].get_error()}")
            self.ended[row] = token == self.grammar.eos_id

    def allowed(self) -> torch.Tensor:
        """(rows, vocabulary) booleans: the tokens each row may write next (only end-of-text once it ended)."""
        for row, matcher in enumerate(self.matchers):
            if not self.ended[row]:
                llguidance.numpy.fill_next_token_bitmask(matcher, self.bitmask, row)
        words = torch.from_numpy(self.bitmask)
        mask = ((words.unsqueeze(-1) >> BITS) & 1).bool().flatten(1)[:, : self.grammar.vocab_size]
        for row in (r for r, ended in enumerate(self.ended) if ended):
            mask[row] = False
            mask[row, self.grammar.eos_id] = True
        return mask

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        if self.started:
            self.consume(input_ids[:, -1].tolist())
        self.started = True
        return scores.masked_fill(~self.allowed().to(scores.device), float("-inf"))
