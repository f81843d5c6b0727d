"""What reading Reddit's text does on the EXPRESS dev segments: each segment written as a dump line
carries it (`&`, `<`, `>` HTML-escaped, so the editor's `&#x200B;` becomes `&amp;#x200B;`), read back
by the reader (sources/reddit_text.py), extracted with the shipped model, and compared with EXPRESS
as the report's "Against EXPRESS" section compares a release (warehouse/pages/express_reference.py).

Three ways to settle the invisible characters that one decoding pass leaves: `kept` (the literal
`&#x200B;` and `&nbsp;`, as EXPRESS's text has them), `gone` (the shipped table: zero-width ones
removed, no-break spaces a plain space) and `space` (zero-width ones a space too).

    .venv/bin/python bench/reddit_text.py [--dev PATH]

Prints the figures per way, then one JSON line.
"""
from __future__ import annotations

import argparse
import html
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from extractors.disclosures import DisclosureExtractor  # noqa: E402
from sources.reddit_json import post_from_json  # noqa: E402
from sources.reddit_text import InvisibleCharacters, default_table  # noqa: E402
from warehouse.pages.express_reference import compare_with_express  # noqa: E402
from warehouse.releases.stats import ReleaseStats  # noqa: E402

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "express-reference" / "segments_dev.jsonl"
ENTITIES = ("&amp;", "&lt;", "&gt;", "&quot;", "&#39;", "&#x200B;", "&nbsp;")


def ways() -> dict[str, InvisibleCharacters]:
    shipped = default_table()
    return {"kept": InvisibleCharacters("kept", {}), "gone": shipped,
            "space": InvisibleCharacters("space", dict.fromkeys(shipped.becomes, " "))}


def stats_of(texts: list[str], found: list[list]) -> ReleaseStats:
    """The statistics the report reads, of one example per segment (every segment kept)."""
    surfaces = Counter(d.surface.lower() for ds in found for d in ds if not d.negated)
    labels = Counter(d.label for ds in found for d in ds if not d.negated)
    masks = Counter(sum(not d.negated for d in ds) for ds in found)
    words = Counter(len(t.split()) for t in texts)
    return ReleaseStats({"test": len(texts)}, labels, dict(masks), dict(words), surfaces=surfaces)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, allow_abbrev=False)
    ap.add_argument("--dev", type=Path, default=DEV)
    args = ap.parse_args()
    rows = [json.loads(line) for line in args.dev.read_text(encoding="utf-8").splitlines()]
    lines = [{"id": f"d{k}", "body": html.escape(r["text"], quote=False), "link_id": "t3_dev"} for k, r in enumerate(rows)]
    read = [post_from_json(obj, source="dump").text for obj in lines]  # the reader as a build runs it
    ex = DisclosureExtractor()
    out: dict[str, object] = {"segments": len(rows)}
    print(f"{len(rows)} dev segments; escaped as dump lines: "
          f"{sum('&amp;' in o['body'] for o in lines)} hold `&amp;`, {sum('&lt;' in o['body'] or '&gt;' in o['body'] for o in lines)} `&lt;`/`&gt;`")
    results = {}
    for name, table in ways().items():
        texts = [table.settle(html.unescape(o["body"])) for o in lines]
        found = list(ex.extract_many(texts))
        results[name] = (texts, found)
        left = {e: sum(e in t for t in texts) for e in ENTITIES}
        words = sum(len(t.split()) for t in texts)
        print(f"{name:5}: segments still holding {', '.join(f'{e} {n}' for e, n in left.items() if n) or 'no entity'}; "
              f"{words:,} words; {sum(map(len, found)):,} disclosures")
        out[f"{name}_words"] = words
        out[f"{name}_entities_left"] = {e: n for e, n in left.items() if n}
    kept_texts = results["kept"][0]
    print(f"kept = EXPRESS's own text for {sum(a == r['text'] for a, r in zip(kept_texts, rows))} of {len(rows)} segments; "
          f"gone = what the reader gives for {sum(a == b for a, b in zip(results['gone'][0], read))}")
    base = [[(d.surface, d.label) for d in ds] for ds in results["kept"][1]]
    for name in ("gone", "space"):
        differ = sum(a != [(d.surface, d.label) for d in ds] for a, ds in zip(base, results[name][1]))
        print(f"  segments whose disclosures differ from kept's: {name} {differ}")
        out[f"{name}_segments_with_other_disclosures"] = differ
    print("Against EXPRESS (the report's figures):")
    comparisons = {name: compare_with_express(stats_of(*results[name])) for name in results}
    for k, fig in enumerate(comparisons["kept"].figures):
        cells = []
        for name, comp in comparisons.items():
            f = comp.figures[k]
            value = f"{f.release}-{f.release_high}" if f.kind == "range" else (
                f"{f.release:.3f}" if isinstance(f.release, float) else f"{f.release}")
            cells.append(f"{name} {value}")
            key = re.sub(r"\W+", "_", f.name.split(",")[0].replace("the paper's ", "")).strip("_") + (
                "_range" if f.kind == "range" else "")
            out[f"{name}_{key}"] = round(f.release, 4) if f.kind != "range" else [f.release, f.release_high]
        paper = f"{fig.paper:.3f}" if isinstance(fig.paper, float) else fig.paper
        print(f"  {fig.name} (EXPRESS {paper}): " + "; ".join(cells))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
