"""Report sections: the release against the statistics EXPRESS publishes, and the details a reader
may want once (subreddits, emotion dimensions, versions), collapsed."""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from schemas.lexicon import DIMS, Decomposition, default_decomposition
from warehouse.pages.express_reference import Figure
from warehouse.pages.charts import EXPRESS, PARENT, RELEASE, grouped_hbar
from warehouse.pages.format import Markup, dec, details, num, pct, section, table, tag, text

if TYPE_CHECKING:
    from warehouse.pages.report_data import ReportData


def _value(f: Figure, which: str) -> str:
    v = f.paper if which == "paper" else f.release
    if f.kind == "range":
        return f"{num(v)}–{num(f.paper_high if which == 'paper' else f.release_high)}"
    if f.kind == "share":
        return pct(float(v))
    if f.kind == "mean":
        return num(v) if isinstance(v, int) else dec(float(v), 2 if f.name.startswith("masks") else 1)
    return num(v)


def express(d: "ReportData") -> Markup:
    c, v = d.express, d.release.version
    rows = [tag("tr", [tag("td", text(f.name)), tag("td", text(_value(f, "paper")), cls="n"),
                       tag("td", text(_value(f, "release")), cls="n"),
                       tag("td", text(f.note), cls="note" if f.far else "muted")]) for f in c.figures]
    head = tag("thead", tag("tr", [tag("th", text("statistic")), tag("th", text("EXPRESS"), cls="n"),
                                   tag("th", text(v), cls="n"), tag("th", text("note"))]))
    figures = tag("table", [head, tag("tbody", rows)], cls="figures", id="express-figures")
    chart = grouped_hbar([x.label for x in c.labels], [("EXPRESS", [x.paper_share for x in c.labels], EXPRESS),
                                                      (v, [x.share for x in c.labels], RELEASE)],
                         "share of masks, EXPRESS's most frequent words")
    far = [x for x in c.labels if x.note]
    notes = tag("ul", [tag("li", text(x.note), cls="note") for x in far]) if far else tag(
        "p", text("Each of these words takes a share of the masks close to its share in EXPRESS."), cls="muted")
    table_rows = [[x.label, num(x.paper_count), pct(x.paper_share), num(x.count), pct(x.share)] for x in c.labels]
    labels = table(["word", "masks in EXPRESS", "share", f"masks in {v}", "share"], table_rows, id="express-labels",
                   numeric=range(1, 5))
    intro = tag("p", text("The paper (Shu et al., “Fluent but Unfeeling”, 2026) publishes these statistics of its "
                          f"33,679 segments. Words are compared as masked, lower-cased (as the paper counts "
                          f"labels); figures from {c.version}."), cls="muted")
    return section("express", "Against EXPRESS", "Is it like the EXPRESS benchmark?", [
        intro, figures, tag("div", [tag("div", chart, cls="chartbox"), tag("div", [tag("h3", text("Far off")), notes])],
                            cls="grid2"),
        details("Table: the paper's most frequent words", labels)])


def dimension_shares(labels: Counter[str], dec_: Decomposition) -> dict[str, float]:
    """Share of masks whose label has each Plutchik/valence dimension (plus words with none)."""
    total = sum(labels.values()) or 1
    shares = {dim: 0.0 for dim in DIMS}
    none = 0
    for word, n in labels.items():
        vec = dec_.vector(word)
        if not any(vec):
            none += n
        for dim, x in zip(DIMS, vec):
            shares[dim] += n * x
    out = {dim: x / total for dim, x in shares.items()}
    out["(no dimension)"] = none / total
    return out


def details_section(d: "ReportData") -> Markup:
    s, v, diff = d.stats, d.release.version, d.diff
    decomposition = default_decomposition()
    dims = dimension_shares(s.labels, decomposition)
    series = [(v, list(dims.values()), RELEASE)]
    if d.parent_stats is not None:
        series.insert(0, (d.parent_name, list(dimension_shares(d.parent_stats.labels, decomposition).values()), PARENT))
    dim_chart = grouped_hbar(list(dims), series, "share of masks whose label carries each dimension")
    if diff:
        sub = diff["subreddits"]
        subs = table(["subreddit", d.parent_name, v], [[r["subreddit"], num(r["count_a"]), num(r["count_b"])]
                                                       for r in sub["top"]], id="diff-subreddits", numeric=(1, 2))
        sub_title = f"Subreddits: the {num(len(sub['top']))} largest of {num(sub['distinct_b'])}"
    else:
        top = list(s.subreddits.items())[:25]
        subs = table(["subreddit", "segments"], [[k, num(n)] for k, n in top], numeric=(1,))
        sub_title = f"Subreddits: the {num(len(top))} largest of {num(len(s.subreddits))}"
    m = d.manifest
    versions = [["dataset", f"{d.release.dataset} {v}"], ["code", str(m.get("code_version") or "unknown")],
                ["run", str(m.get("run_id") or "unknown")],
                ["lexicon", str(m.get("lexicon_version") or "unknown")],
                ["decomposition", str(m.get("decomposition_version") or "unknown")],
                ["vocabulary", str(m.get("vocabulary_version") or "unknown")]]
    acc = m.get("acceptance")
    versions.append(["acceptance model", f"{acc.get('version')} (threshold {dec(float(acc.get('threshold')), 3)})"
                     if isinstance(acc, dict) and acc.get("threshold") is not None else "off"])
    seg = m.get("segmentation") or {}
    if seg:
        versions.append(["segmentation", f"{seg.get('tokenizer')}, windows of {num(int(seg.get('max_tokens', 0)))} tokens"])
    inputs = m.get("inputs") or []
    versions.append(["inputs", ", ".join(str(i.get("path", "")).rsplit("/", 1)[-1] for i in inputs) or "none recorded"])
    return section("details", "Details", "What else is in it, and what made it?", [
        tag("div", [tag("div", dim_chart, cls="chartbox"),
                    tag("div", [details(sub_title, subs),
                                details("Emotion dimensions: shares", table(
                                    ["dimension", "share of masks"], [[k, pct(x)] for k, x in dims.items()],
                                    numeric=(1,))),
                                details("Versions and inputs", table(["", ""], versions))])], cls="grid2")])
