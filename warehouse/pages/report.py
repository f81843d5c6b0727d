"""The data-quality report of a release: one self-contained HTML page (inline CSS and SVG charts;
nothing loads from the network) that a researcher reads in a minute. A summary band first, then
sections that answer: is it like the last release, is it like EXPRESS, what do its examples look
like and can they be trusted, what did privacy scrubbing remove and what did the gate check.

The comparison with the parent release is `warehouse.releases.diff.compare`, the same computation
`express diff` prints. GX Data Docs are linked beside it.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from warehouse.releases.diff import compare
from warehouse.pages.express_reference import compare_with_express
from warehouse.layout import ReleasePaths, Warehouse
from warehouse.pages.pii_statement import scrubbed_kinds
from warehouse.releases.release import Release
from warehouse.pages.report_data import ReportData
from warehouse.pages.examples import label_examples, lowest_acceptance
from warehouse.pages.format import Markup, date, span, tag, text
from warehouse.releases.stats import release_stats
from warehouse.ledgers.withdrawn import withdrawal

TOP_LABELS_WITH_EXAMPLES = 6
EXAMPLES_PER_LABEL = 3
LOOK_FIRST = 10


def gather(release: Release, docs_link: str | None = None, review: dict[str, Any] | None = None) -> ReportData:
    m = release.manifest()
    files = release.split_files()
    marks = placeholders(m)
    stats = release_stats(files, list(marks.values()))
    top = [w for w, _ in stats.ranked_labels(TOP_LABELS_WITH_EXAMPLES)]
    data = ReportData(release, m, stats, compare_with_express(stats), label_examples(files, top, EXAMPLES_PER_LABEL),
                      lowest_acceptance(release, m, LOOK_FIRST),
                      {k: (mark, *stats.marks[mark]) for k, mark in marks.items()}, review=review, docs_link=docs_link)
    parent = m.get("parent_version")
    if parent:
        path = Warehouse.of_release(release.path).release_dir(release.dataset, str(parent))
        record = withdrawal(path)
        if ReleasePaths(path).published and not (record and record.get("purged")):  # a purged one has no files
            data.parent = Release.at(path)
            data.parent_stats = release_stats(data.parent.split_files())
            data.diff = compare(data.parent, release, data.parent_stats, stats)  # `express diff`'s defaults
        else:
            data.parent_missing = str(parent)
    return data


def placeholders(m: dict[str, Any]) -> dict[str, str]:
    """kind -> placeholder for each PII kind the build scrubbed: as the manifest records them (the
    gate's detectors), else the `[KIND]` form every kind uses; none when scrubbing was off."""
    kinds = scrubbed_kinds(m)
    pii = (m.get("gate") or {}).get("pii") or {}
    known = (pii.get("detectors") or {}).get("placeholders") or {}
    return {k: known.get(k) or f"[{k.upper()}]" for k in (pii.get("kinds") or kinds) if k in kinds}


def render_report(release: Release, out: Path, docs_link: str | None = None,
                  review: dict[str, Any] | None = None) -> Path:
    """Write the report HTML to `out` and return it; `review`: the release's hand-review figures
    (review.stats.release_review), None when nothing was reviewed."""
    from warehouse.pages import express as report_express, parent as report_parent, summary as report_summary, trust as report_trust

    d = gather(release, docs_link, review)
    sections = [("changes", "Since " + (d.parent_name or "the last release")), ("labels", "Labels"),
                ("shape", "Masks and lengths"), ("express", "Against EXPRESS"), ("examples", "Examples"),
                ("look-first", "Look at these first"), ("privacy", "Privacy"), ("review", "Review"),
                ("funnel", "Funnel"), ("gate", "Gate"), ("details", "Details")]
    nav = tag("nav", tag("div", [tag("a", text(title), href=f"#{sid}") for sid, title in sections]))
    m = d.manifest
    meta = [f"created {date(m.get('created') or '')}",
            f"parent {d.parent_name or d.parent_missing or 'none (first release)'}",
            f"code {m.get('code_version') or 'unknown'}"]
    if d.stats.created:
        meta.insert(1, "posts from " + span(*d.stats.created))
    header = tag("header", [tag("h1", text(f"{d.name}: data quality")), tag("p", text(" · ".join(meta)), cls="meta")])
    body = [report_summary.summary_band(d), report_summary.answers(d), report_parent.changes(d), report_parent.labels(d), report_parent.shape(d),
            report_express.express(d), report_trust.examples(d), report_trust.look_first(d), report_trust.privacy(d),
            report_trust.review(d), report_parent.funnel(d), report_trust.gate(d), report_express.details_section(d)]
    page = ("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            "<meta name=viewport content='width=device-width, initial-scale=1'>"
            f"<title>{text(d.name)}: data-quality report</title><style>{CSS}</style></head>"
            f"<body>{header}{nav}<main>{''.join(body)}</main></body></html>\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out


def docs_link_for(release: Release, report: Path) -> str | None:
    docs = release.paths.data_docs
    return os.path.relpath(docs, report.parent) if docs.exists() else None


CSS = Markup("""
:root{--ink:#1d2733;--muted:#5b6675;--line:#e3e6ea;--blue:#2f6db5;--grey:#a3acb9;--orange:#d9822b;
--ok:#1a7f37;--bad:#cf222e;--soft:#f6f8fa}
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",sans-serif;color:var(--ink);margin:0}
header,main,nav>div{max-width:1180px;margin:0 auto;padding-left:2em;padding-right:2em}
header{padding-top:1.3em;padding-bottom:.5em}
h1{font-size:1.55em;margin:0}
.meta{color:var(--muted);margin:.15em 0 0}
nav{position:sticky;top:0;z-index:2;background:rgba(255,255,255,.97);border-bottom:1px solid var(--line)}
nav>div{display:flex;flex-wrap:wrap;gap:.2em 1.1em;padding-top:.45em;padding-bottom:.45em;font-size:.92em}
nav a,details>summary,a{color:var(--blue);text-decoration:none}
a:hover,details>summary:hover{text-decoration:underline}
main{padding-bottom:4em}
h2{font-size:1.28em;margin:1.9em 0 0;padding-top:.4em;border-top:1px solid var(--line);scroll-margin-top:2.8em}
h3{font-size:1em;margin:1.1em 0 .3em}
.question{color:var(--muted);margin:.15em 0 .7em}
.band{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:.7em;margin:1em 0 .4em}
.answers{margin:.8em 0 0;padding-left:1.1em}.answers li{margin:.25em 0}.answers a{font-weight:650}
.card{border:1px solid var(--line);border-radius:8px;padding:.65em .9em .7em;background:var(--soft)}
.card h3{font-size:.76em;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);margin:0}
.card .value{font-size:1.75em;font-weight:650;line-height:1.25;font-variant-numeric:tabular-nums}
.card .sub{font-size:.86em}
.card .delta{font-size:.86em;color:var(--muted);margin-top:.2em}
.card table{font-size:.86em;margin:.2em 0 0}.card td{padding:0 .5em 0 0;border:0}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:1.2em 2.2em;align-items:start}
@media (max-width:820px){.grid2{grid-template-columns:1fr}}
svg.chart{max-width:100%;height:auto;display:block}
.chartbox{max-width:760px}
table{border-collapse:collapse;font-size:.9em;margin:.35em 0}
th,td{padding:.22em .75em .22em 0;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{color:var(--muted);font-weight:600}
td.n,th.n{text-align:right;padding-left:.75em;font-variant-numeric:tabular-nums}
details{margin:.45em 0}
details>summary{cursor:pointer;font-size:.92em}
details[open]>summary{margin-bottom:.3em}
.chip{display:inline-block;padding:0 .55em;border-radius:1em;background:#eef2f7;margin:.1em .1em;font-size:.9em}
.chip.new{background:#dff3e4}.chip.gone{background:#fbe3e3;text-decoration:line-through}
.ok{color:var(--ok);font-weight:650}.bad{color:var(--bad);font-weight:650}.muted{color:var(--muted)}
.up{color:var(--ok)}.down{color:var(--bad)}
.note{color:#8a4b08}
.figures td:nth-child(4){max-width:420px}
.ex{border-left:3px solid var(--line);padding:.15em 0 .15em .8em;margin:.45em 0;font-size:.93em}
.ex .src{font-size:.8em;color:var(--muted)}
mark{padding:0 .25em;border-radius:3px}
mark.target{background:#ffd866;font-weight:650}
mark.other{background:#e6eaf0}
.score{font-variant-numeric:tabular-nums;font-weight:650}
code{background:#f1f3f5;padding:.05em .3em;border-radius:3px;font-size:.9em}
.legend{font-size:.85em;color:var(--muted)}
.swatch{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin:0 .3em 0 .8em;vertical-align:-.05em}
""")
