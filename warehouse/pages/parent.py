"""Report sections about the release itself and how it changed since its parent: what changed,
labels, masks and lengths, the funnel. Every figure of the comparison is read from the diff
(warehouse/releases/diff.py), so the page and `express diff` say the same."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from warehouse.pages.charts import PARENT, RELEASE, grouped_columns, grouped_hbar, overlaid_histograms
from warehouse.pages.format import (Markup, chips, dec, details, num, pct, section, signed, signed_pct,
                                     table, tag, text)

if TYPE_CHECKING:
    from warehouse.pages.report_data import ReportData

LABELS_CHARTED = 15


def changes(d: "ReportData") -> Markup:
    title = f"Since {d.parent_name}" if d.parent else "Since the last release"
    question = "Is this release like the last one? What changed?"
    if d.diff is None:
        why = (f"The parent release {d.parent_missing} is no longer in the warehouse: nothing to compare with."
               if d.parent_missing else f"This is the first release of {d.release.dataset}: nothing to compare with.")
        return section("changes", title, question, [tag("p", text(why))])
    diff, p = d.diff, d.parent_name
    rows = [[split, num(c["rows_a"]), num(c["rows_b"]), signed(c["added"]), signed(-c["removed"]), num(c["kept"])]
            for split, c in diff["splits"].items()]
    t = diff["totals"]
    rows.append(["total", num(t["rows_a"]), num(t["rows_b"]), signed(sum(c["added"] for c in diff["splits"].values())),
                 signed(-sum(c["removed"] for c in diff["splits"].values())),
                 num(sum(c["kept"] for c in diff["splits"].values()))])
    splits = table(["split", f"rows in {p}", f"rows in {d.release.version}", "added", "removed", "in both"], rows,
                   id="diff-splits", numeric=range(1, 6))
    lab, mps, w = diff["labels"], diff["masks_per_segment"], diff["words_per_segment"]
    sub = diff["subreddits"]
    digest = tag("ul", [
        tag("li", text(f"Label shares moved by a Jensen-Shannon divergence of {dec(lab['js_divergence'], 4)}"
                       + _gate_bound(d) + ".")),
        tag("li", text(f"Masks per segment: {dec(mps['mean_a'])} → {dec(mps['mean_b'])} on average.")),
        tag("li", text(f"Words per segment: {dec(w['a']['mean'], 1)} → {dec(w['b']['mean'], 1)} on average "
                       f"(median {num(w['a']['median'])} → {num(w['b']['median'])}).")),
        tag("li", text(f"Subreddits: {num(sub['distinct_a'])} → {num(sub['distinct_b'])}.")),
    ], id="diff-digest")
    return section("changes", title, question, [splits, digest])


def _gate_bound(d: "ReportData") -> str:
    bound = ((d.manifest.get("gate") or {}).get("parameters") or {}).get("max_js_divergence")
    return f" (the gate allows up to {dec(bound, 2)})" if isinstance(bound, (int, float)) else ""


def labels(d: "ReportData") -> Markup:
    s, diff = d.stats, d.diff
    question = "Which emotions does it hold, and did their shares shift?"
    total = s.total_masks or 1
    if diff:
        lab = diff["labels"]
        top = sorted(lab["rows"], key=lambda r: (-max(r["share_a"], r["share_b"]), r["label"]))[:LABELS_CHARTED]
        chart = grouped_hbar([r["label"] for r in top],
                             [(d.parent_name, [r["share_a"] for r in top], PARENT),
                              (d.release.version, [r["share_b"] for r in top], RELEASE)],
                             f"share of masks, {LABELS_CHARTED} largest labels")
        rows = [[r["label"], num(r["count_a"]), pct(r["share_a"]), num(r["count_b"]), pct(r["share_b"]),
                 signed_pct(r["delta"], points=True)] for r in lab["rows"]]
        full = table(["label", f"masks in {d.parent_name}", "share", f"masks in {d.release.version}", "share", "change"],
                     rows, id="diff-labels", numeric=range(1, 6))
        moved = tag("div", [
            tag("p", [tag("b", text(f"Jensen-Shannon divergence {dec(lab['js_divergence'], 4)}")),
                      text(f" between the label shares of {d.parent_name} and {d.release.version}" + _gate_bound(d)
                           + ".")], id="diff-js"),
            tag("p", [text(f"New labels ({num(len(lab['new_labels']))}): "),
                      chips(lab["new_labels"], "new") if lab["new_labels"] else text("none")], id="diff-new"),
            tag("p", [text(f"Gone labels ({num(len(lab['gone_labels']))}): "),
                      chips(lab["gone_labels"], "gone") if lab["gone_labels"] else text("none")], id="diff-gone"),
            _largest_changes(lab)])
        body = [tag("div", [tag("div", chart, cls="chartbox"), moved], cls="grid2"),
                details(f"Table: all {num(len(rows))} labels in both releases", full)]
    else:
        top = s.ranked_labels(LABELS_CHARTED)
        chart = grouped_hbar([w for w, _ in top], [(d.release.version, [n / total for _, n in top], RELEASE)],
                             f"share of masks, {LABELS_CHARTED} largest labels")
        rows = [[w, num(n), pct(n / total)] for w, n in s.ranked_labels()]
        body = [tag("div", chart, cls="chartbox"),
                details(f"Table: all {num(len(rows))} labels", table(["label", "masks", "share"], rows,
                                                                     id="labels-table", numeric=(1, 2)))]
    tail = sum(n for _, n in s.ranked_labels()[LABELS_CHARTED:])
    body.insert(1, tag("p", text(f"{num(len(s.labels))} distinct labels over {num(s.total_masks)} masks; beyond the "
                                 f"{LABELS_CHARTED} largest, {num(max(0, len(s.labels) - LABELS_CHARTED))} labels hold "
                                 f"{pct(tail / total)} of the masks."), cls="muted"))
    return section("labels", "Labels", question, body)


def _largest_changes(lab: dict[str, Any]) -> Markup:
    rows = [[r["label"], pct(r["share_a"]), pct(r["share_b"]), signed_pct(r["delta"], points=True)]
            for r in lab["largest_changes"][:6]]
    return tag("div", [tag("h3", text("Largest share changes")),
                       table(["label", "before", "now", "change"], rows, id="diff-largest", numeric=(1, 2, 3))])


def shape(d: "ReportData") -> Markup:
    s, diff, v = d.stats, d.diff, d.release.version
    question = "How many masks does a segment carry, and how long are segments?"
    ref = d.express
    words_ref = next(f for f in ref.figures if f.kind == "range")
    marks = [(float(next(f for f in ref.figures if f.name == "words per segment").paper), "EXPRESS mean")]
    if diff:
        mps = diff["masks_per_segment"]["rows"]
        masks_chart = grouped_columns([str(r["masks"]) for r in mps],
                                      [(d.parent_name, [r["share_a"] for r in mps], PARENT),
                                       (v, [r["share_b"] for r in mps], RELEASE)],
                                      "share of segments by number of masks", "masks in the segment")
        length_chart = overlaid_histograms([(d.parent_name, d.parent_stats.words, PARENT), (v, s.words, RELEASE)],
                                           "share of segments by length", "words in the segment", marks)
        mtable = table(["masks", f"segments in {d.parent_name}", "share", f"segments in {v}", "share"],
                       [[num(r["masks"]), num(r["count_a"]), pct(r["share_a"]), num(r["count_b"]), pct(r["share_b"])]
                        for r in mps], id="diff-masks", numeric=range(0, 5))
        w = diff["words_per_segment"]
        wtable = table(["words per segment", d.parent_name, v],
                       [[k, _words(w["a"][k]), _words(w["b"][k])] for k in ("mean", "median", "min", "max")],
                       id="diff-words", numeric=(1, 2))
    else:
        n = s.total_rows or 1
        keys = sorted(s.masks_per_example)
        masks_chart = grouped_columns([str(k) for k in keys], [(v, [s.masks_per_example[k] / n for k in keys], RELEASE)],
                                      "share of segments by number of masks", "masks in the segment")
        length_chart = overlaid_histograms([(v, s.words, RELEASE)], "share of segments by length",
                                           "words in the segment", marks)
        mtable = table(["masks", "segments", "share"], [[num(k), num(s.masks_per_example[k]),
                                                         pct(s.masks_per_example[k] / n)] for k in keys],
                       id="masks-table", numeric=(0, 1, 2))
        ws = s.words_summary
        wtable = table(["words per segment", v], [["mean", dec(ws.mean, 1)], ["median", num(ws.median)],
                                                  ["min", num(ws.min)], ["max", num(ws.max)]], numeric=(1,))
    seg = s.segments_per_post
    posts = table(["segments of a post", "posts"], [[num(k), num(n)] for k, n in seg.items()], numeric=(0, 1))
    summary = tag("p", text(f"{dec(s.masks_per_segment)} masks and {dec(s.words_summary.mean, 1)} words per segment "
                            f"on average; {num(s.posts)} posts gave {num(s.total_rows)} segments. EXPRESS: "
                            f"{dec(float(ref.figures[0].paper))} masks and {num(words_ref.paper)}–"
                            f"{num(words_ref.paper_high)} words."), cls="muted")
    return section("shape", "Masks and lengths", question, [
        summary, tag("div", [tag("div", masks_chart), tag("div", length_chart)], cls="grid2"),
        details("Tables: masks per segment, words per segment, segments per post",
                tag("div", [mtable, wtable, posts], cls="grid2"))])


def _words(x: int | float) -> str:
    return dec(x, 1) if isinstance(x, float) else num(x)


def funnel(d: "ReportData") -> Markup:
    m, diff, v = d.manifest, d.diff, d.release.version
    f = m.get("funnel") or {}
    question = "What did the build read, keep and drop, and why?"
    if not f:
        return section("funnel", "Funnel", question, [tag("p", text("This release records no funnel."))])
    dropped = sum((f.get("dropped") or {}).values())
    line = tag("p", text(f"Read {num(f.get('read', 0))} posts = kept {num(f.get('kept', 0))} + dropped {num(dropped)} "
                         f"+ malformed {num(f.get('malformed', 0))}."), id="funnel-total")
    if diff:
        fd = diff["funnel"]
        reasons = fd["dropped"]
        chart = grouped_hbar([r["reason"].replace("_", " ") for r in reasons],
                             [(d.parent_name, [r["share_a"] for r in reasons], PARENT),
                              (v, [r["share_b"] for r in reasons], RELEASE)],
                             "posts dropped, by reason (share of posts read)")
        rows = [["read", num(fd["read_a"]), "", num(fd["read_b"]), ""],
                ["kept", num(fd["kept_a"]), pct(fd["kept_a"] / fd["read_a"]) if fd["read_a"] else "",
                 num(fd["kept_b"]), pct(fd["kept_b"] / fd["read_b"]) if fd["read_b"] else ""],
                ["malformed", num(fd["malformed_a"]), "", num(fd["malformed_b"]), ""]]
        rows += [[f"dropped: {r['reason']}", num(r["count_a"]), pct(r["share_a"]), num(r["count_b"]), pct(r["share_b"])]
                 for r in reasons]
        side = table(["posts", d.parent_name, "of read", v, "of read"], rows, id="diff-funnel", numeric=range(1, 5))
    else:
        read = f.get("read") or 1
        reasons = sorted((f.get("dropped") or {}).items(), key=lambda kv: (-kv[1], kv[0]))
        chart = grouped_hbar([r.replace("_", " ") for r, _ in reasons], [(v, [n / read for _, n in reasons], RELEASE)],
                             "posts dropped, by reason (share of posts read)")
        side = table(["dropped because", "posts", "of read"], [[r, num(n), pct(n / read)] for r, n in reasons],
                     numeric=(1, 2))
    stages = table(["stage", "read", "kept", "dropped", "malformed"],
                   [[st, num(sf.get("read", 0)), num(sf.get("kept", 0)), num(sum((sf.get("dropped") or {}).values())),
                     num(sf.get("malformed", 0))] for st, sf in (m.get("stages") or {}).items()], numeric=range(1, 5))
    return section("funnel", "Funnel", question, [
        line, tag("div", chart, cls="chartbox"),
        details("Tables: funnel counts" + (f" of {d.parent_name} and {v}" if diff else "") + ", per stage",
                tag("div", [side, stages], cls="grid2"))])

