"""`express extract`: JSONL in ({"id", "text"} per line), JSONL out, one line per (non-blank) input line,
same order."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from common.errors import InputError
from common.files import writing
from common.jsonl import check_output, read_id_texts
from extractors.acceptance import ON
from extractors.disclosures import DisclosureExtractor, mask_text
from extractors.examples import usable
from extractors.parallel import extract_parallel
from extractors.reference import REFERENCE


def extract_jsonl(in_path: str | Path, out_path: str | Path, keep_negated: bool = False,
                  extractor: DisclosureExtractor | None = None, workers: int = 1,
                  forms: str = REFERENCE, acceptance: str = ON) -> int:
    """Write one result per non-blank input line; returns the number of lines written.

    `workers` > 1 spreads the texts over that many processes; the output is the same.
    `acceptance` "off" lists every hit of the rules (the default drops those the model rejects).
    """
    check_output(in_path, out_path, InputError)
    ids: list[Any] = []
    texts: list[str] = []
    for id_, text in read_id_texts(in_path, InputError):  # validate the whole file before writing anything
        ids.append(id_)
        texts.append(text)
    n = 0
    with writing(Path(out_path), "w") as out:
        if workers > 1:
            results = extract_parallel(texts, workers, chunk_size=max(1, min(256, len(texts) // (4 * workers))),
                                       forms=forms, acceptance=acceptance)
        else:
            results = (extractor or DisclosureExtractor(forms=forms, acceptance=acceptance)).extract_many(texts)
        for id_, text, found in zip(ids, texts, results):
            row = {"id": id_, "masked_text": mask_text(text, usable(found, keep_negated)),
                   "disclosures": [d.to_json() for d in found]}
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n
