"""Disclosure extraction over several processes, for large inputs.

Texts are cut into chunks; each worker process holds its own DisclosureExtractor (spaCy is
loaded once per process) and chunks come back in input order. At most `2 * workers` chunks are
in flight, so memory does not grow with the input.
"""
from __future__ import annotations

import multiprocessing as mp
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import islice

from schemas.records import Disclosure

from extractors.acceptance import ON
from extractors.disclosures import DisclosureExtractor
from extractors.reference import REFERENCE

_WORKER: DisclosureExtractor | None = None


def _init(batch_size: int, forms: str = REFERENCE, acceptance: str = ON) -> None:
    global _WORKER
    _WORKER = DisclosureExtractor(batch_size=batch_size, forms=forms, acceptance=acceptance)


def _run(chunk: list[str]) -> list[list[Disclosure]]:
    assert _WORKER is not None, "worker not initialised"
    return list(_WORKER.extract_many(chunk))


def extract_parallel(texts: Iterable[str], workers: int, chunk_size: int = 256,
                     batch_size: int = 256, forms: str = REFERENCE,
                     acceptance: str = ON) -> Iterator[list[Disclosure]]:
    """One disclosure list per text, in input order, computed by `workers` processes."""
    if workers <= 1:
        yield from DisclosureExtractor(batch_size=batch_size, forms=forms, acceptance=acceptance).extract_many(texts)
        return
    it = iter(texts)
    ctx = mp.get_context("spawn")  # no inherited threads or half-loaded models
    with ctx.Pool(workers, initializer=_init, initargs=(batch_size, forms, acceptance)) as pool:
        pending: deque = deque()
        while True:
            while len(pending) < 2 * workers and (chunk := list(islice(it, chunk_size))):
                pending.append(pool.apply_async(_run, (chunk,)))
            if not pending:
                break
            yield from pending.popleft().get()
