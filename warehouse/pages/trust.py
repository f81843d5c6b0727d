"""Report sections about trusting the release: examples of its top labels, the masks to look at
first, what privacy scrubbing replaced and what the gate re-checked, hand review, the gate."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from warehouse.pages.examples import Shown
from warehouse.pages.format import Markup, dec, details, num, pct, section, table, tag, text

if TYPE_CHECKING:
    from warehouse.pages.report_data import ReportData

REVIEW_PORT = 8765  # `express review serve`'s default port


def _snippet(ex: Shown) -> Markup:
    out = []
    for p in ex.pieces:
        if p.mask == "target":
            out.append(tag("mark", text(p.text), cls="target", title=f"masked word, label {ex.label}"))
        elif p.mask:
            out.append(tag("mark", text(p.text), cls="other", title="another mask of this segment"))
        else:
            out.append(text(p.text))
    return Markup("".join(out))


def _source(ex: Shown) -> str:
    seg = f", segment {num(ex.segment_index)}" if ex.segment_index else ""
    masks = f", {num(ex.masks)} masks" if ex.masks > 1 else ""
    return f"post {ex.post_id}{seg} · r/{ex.subreddit} · {ex.split}{masks}"


def examples(d: "ReportData") -> Markup:
    question = "What do the examples of a label look like?"
    if not d.examples:
        return section("examples", "Examples", question, [tag("p", text("The release has no labels."))])
    cards = []
    for label, shown in d.examples.items():
        n = d.stats.labels.get(label, 0)
        items = [tag("div", [tag("div", _snippet(ex)), tag("div", text(_source(ex)), cls="src")], cls="ex")
                 for ex in shown]
        cards.append(tag("div", [tag("h3", text(f"{label} · {num(n)} masks")), *items], cls="label-examples"))
    intro = tag("p", text(f"{num(len(d.examples))} most frequent labels, {num(max(len(s) for s in d.examples.values()))} "
                          "segments each, the same ones every time the report is written (ordered by a hash of the "
                          "post and segment). The masked word is highlighted; other masks of the segment are grey."),
                cls="muted")
    return section("examples", "Examples", question, [intro, tag("div", cards, cls="grid2")])


def look_first(d: "ReportData") -> Markup:
    low, release = d.lowest, d.release.release_id
    question = "Which masks should a reviewer check first?"
    command = tag("code", text(f"express review serve --release {release}"))
    serve = tag("p", [text("Review them by hand: run "), command,
                      text(" (with the build's --warehouse, if it had one) and open "),
                      tag("a", text(f"http://127.0.0.1:{REVIEW_PORT}/"), href=f"http://127.0.0.1:{REVIEW_PORT}/"),
                      text("; decisions go to the review ledger and the next build applies them.")])
    if low.missing:
        return section("look-first", "Look at these first", question, [tag("p", text(low.missing)), serve])
    threshold = (f" It keeps a hit at a score of {dec(low.threshold, 3)} or more; these are the ones it kept with "
                 "the least confidence.") if low.threshold is not None else ""
    intro = tag("p", text(f"The acceptance model scored {num(low.scored)} masks of this release: the probability "
                          f"that a reviewer keeps the mask.{threshold}"), cls="muted")
    rows = [tag("tr", [tag("td", text(dec(ex.acceptance or 0.0, 3)), cls="n score"),
                       tag("td", [tag("div", _snippet(ex)), tag("div", text(_source(ex) + f" · pattern {ex.pattern}"),
                                                                 cls="src")], cls="ex")])
            for ex in low.shown]
    head = tag("thead", tag("tr", [tag("th", text("acceptance"), cls="n"), tag("th", text("mask in context"))]))
    return section("look-first", "Look at these first", question,
                   [intro, tag("table", [head, tag("tbody", rows)], id="look-first-table"), serve])


def privacy(d: "ReportData") -> Markup:
    m = d.manifest
    question = "What did privacy scrubbing replace, and what did the gate check?"
    if not d.placeholders:
        return section("privacy", "Privacy", question, [tag("p", text(
            "PII scrubbing was switched off for this build: texts may hold personal details."))])
    rows = [[kind, mark, num(n), num(segs), pct(segs / d.stats.total_rows) if d.stats.total_rows else "0.0%"]
            for kind, (mark, n, segs) in sorted(d.placeholders.items(), key=lambda kv: (-kv[1][1], kv[0]))]
    found = table(["kind", "placeholder", "in the texts", "segments", "of segments"], rows, id="placeholders",
                  numeric=(2, 3, 4))
    pii = (m.get("gate") or {}).get("pii") or {}
    if pii:
        libs = ", ".join(f"{k} {v}" for k, v in ((pii.get("detectors") or {}).get("libraries") or {}).items())
        names = (f" Person names were looked for in {num(pii.get('rows_name_checked', 0))} of them (a deterministic "
                 f"sample of at most {num(pii.get('names_sample_rows', 0))})." if "name" in (pii.get("kinds") or [])
                 else "")
        check = (f"The quality gate re-ran the scrubber's own detectors ({libs}) on the text and masked text of all "
                 f"{num(pii.get('rows_checked', 0))} rows, for {num(len(pii.get('kinds') or []))} kinds "
                 f"({', '.join(pii.get('kinds') or [])}), and found no personal data left.{names}")
    else:
        check = "The quality gate did not re-check this release for personal data."
    return section("privacy", "Privacy", question, [
        tag("div", [tag("div", [tag("h3", text("Placeholders left by scrubbing")), found]),
                    tag("div", [tag("h3", text("The gate's re-check")), tag("p", text(check), id="pii-recheck")])],
            cls="grid2")])


def review(d: "ReportData") -> Markup:
    question = "Were masks reviewed by hand, and how many were right?"
    r = d.review
    total = d.stats.total_masks
    if not r:
        return section("review", "Review", question, [tag("p", [
            text(f"No mask of this release ({num(total)} masks) has been reviewed by hand yet. "),
            tag("code", text(f"express review serve --release {d.release.release_id}")), text(" starts a review.")])])
    o = r["overall"]
    coverage = o["reviewed"] / total if total else 0.0
    head = tag("p", [text(f"{num(o['reviewed'])} of {num(total)} masks reviewed ({pct(coverage)}) by "
                          f"{num(len(r.get('reviewers') or {}))} reviewer(s), ledger version {num(r['ledger_version'])}: "
                          "precision "), tag("b", text(dec(o["precision"], 3) if o["precision"] is not None else "–")),
                     text(f", 95% Wilson interval {dec(o['low'], 3)} – {dec(o['high'], 3)}; {num(o['accepted'])} "
                          f"accepted, {num(o['rejected'])} rejected.")], id="review-summary")
    tables = [details(f"Precision by {key}", table(
        [key, "reviewed", "precision", "95% interval"],
        [[name, num(p["reviewed"]), dec(p["precision"], 3) if p["precision"] is not None else "–",
          f"{dec(p['low'], 3)} – {dec(p['high'], 3)}"] for name, p in r[f"by_{key}"].items()], numeric=(1, 2)))
        for key in ("pattern", "rule", "label")]
    ag = r.get("agreement")
    if ag and ag.get("fleiss_kappa") is not None:
        tables.append(tag("p", text(f"Fleiss' kappa {dec(ag['fleiss_kappa'], 3)} on {num(ag['fleiss_items'])} items "
                                    "all reviewers rated.")))
    return section("review", "Review", question, [head, *tables])


def gate(d: "ReportData") -> Markup:
    g = d.manifest.get("gate")
    question = "What did the quality gate check?"
    if not g:
        return section("gate", "Gate", question, [tag("p", text("The gate was not run for this release."))])
    verdict = tag("span", text("passed" if g.get("success") else "failed"), cls="ok" if g.get("success") else "bad")
    share = g.get("max_label_share")
    js = g.get("label_js_divergence")
    facts = [f"largest label share {pct(share)}" if isinstance(share, (int, float)) else "",
             f"label JS divergence from {g.get('parent')} {dec(js, 4)}" if isinstance(js, (int, float)) and g.get("parent")
             else "no parent release to measure drift against",
             "label-distribution checks skipped (too few masks)" if g.get("distribution_checks") == "skipped" else ""]
    line = tag("p", [text("Great Expectations suites "), verdict, text(": " + "; ".join(f for f in facts if f) + ".")])
    suites = table(["suite", "version", "checks", "met"],
                   [[s["name"], str(s["version"]), s["table"],
                     f"{num(s['statistics']['successful_expectations'])} of {num(s['statistics']['evaluated_expectations'])}"]
                    for s in g.get("suites") or []], id="gate-suites", numeric=(3,))
    params = details("Gate parameters", table(["parameter", "value"], [[k, _param(v)] for k, v in
                                                                         (g.get("parameters") or {}).items()],
                                              numeric=(1,)))
    body = [line, suites, params]
    if d.docs_link:
        body.append(tag("p", [text("Every expectation with its result: "),
                              tag("a", text("Great Expectations Data Docs"), href=d.docs_link),
                              text(" (static files beside the release).")]))
    return section("gate", "Gate", question, body)


def _param(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return num(v)
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)
