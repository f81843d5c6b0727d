"""The PII table (tests/filters/data/pii_table.tsv): our own Reddit-style sentences with the PII
each holds and the traps that must survive. The tests and bench/pii.py read it through here."""
from __future__ import annotations

from pathlib import Path

from privacy.kinds import KINDS

TABLE = Path(__file__).parent / "data" / "pii_table.tsv"


def load_table() -> list[tuple[str, list[tuple[str, str]], list[str]]]:
    """(text, [(kind, value)], [trap]) per row; a written \\n in a cell is a line break."""
    rows = []
    for n, line in enumerate(TABLE.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#") or line.startswith("text\t"):
            continue
        cells = line.replace("\\n", "\n").split("\t")
        if len(cells) != 3:
            raise ValueError(f"{TABLE}:{n}: expected 3 tab-separated columns")
        text, pii, keep = cells
        pairs = [tuple(x.strip().split("=", 1)) for x in pii.split(" | ") if x.strip()]
        if not all(len(p) == 2 and p[0] in KINDS and p[1] in text for p in pairs):
            raise ValueError(f"{TABLE}:{n}: bad pii cell {pii!r}")
        values = [x.strip() for x in keep.split(" | ") if x.strip()]
        if not all(v in text for v in values):
            raise ValueError(f"{TABLE}:{n}: bad keep cell {keep!r}")
        rows.append((text, pairs, values))
    return rows
