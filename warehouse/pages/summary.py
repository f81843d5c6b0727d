"""The top of the report: the summary band (each figure with its change since the parent release)
and the four questions answered in a line each, linking to their sections."""
from __future__ import annotations

from typing import TYPE_CHECKING

from warehouse.pages.format import Markup, change, dec, num, signed, tag, text

if TYPE_CHECKING:
    from warehouse.pages.report_data import ReportData


def _delta(d: "ReportData", a: int | float, b: int | float, digits: int = 0) -> Markup:
    if d.diff is None:
        return tag("div", text("first release" if not d.parent_missing else f"parent {d.parent_missing} not found"),
                   cls="delta")
    return tag("div", text(f"{change(a, b, digits)} since {d.parent_name}"), cls="delta")


def _card(id: str, title: str, value: str, *rest: str) -> Markup:
    return tag("div", [tag("h3", text(title)), tag("div", text(value), cls="value"), *rest], cls="card", id=id)


def summary_band(d: "ReportData") -> Markup:
    m, s, diff = d.manifest, d.stats, d.diff
    gate = m.get("gate")
    if gate:
        suites = gate.get("suites") or []
        passed = sum(x["statistics"]["successful_expectations"] for x in suites)
        total = sum(x["statistics"]["evaluated_expectations"] for x in suites)
        verdict = tag("div", text("passed" if gate.get("success") else "failed"),
                      cls="value " + ("ok" if gate.get("success") else "bad"))
        gate_card = tag("div", [tag("h3", text("Quality gate")), verdict,
                                tag("div", text(f"{num(passed)} of {num(total)} expectations met; no personal data "
                                                "found on re-check"), cls="sub"),
                                _gate_delta(d)], cls="card", id="band-gate")
    else:
        gate_card = _card("band-gate", "Quality gate", "not run", tag("div", text("[gate] enabled = false"), cls="sub"))
    split_rows = []
    for split, rows in s.rows.items():
        before = (diff["splits"].get(split) or {}).get("rows_a", 0) if diff else None
        split_rows.append(tag("tr", [tag("td", text(split)), tag("td", text(num(rows)), cls="n"),
                                     tag("td", text(signed(rows - before) if before is not None else ""),
                                         cls="n muted")]))
    rows_card = _card("band-rows", "Rows", num(s.total_rows), tag("table", split_rows),
                      _delta(d, diff["totals"]["rows_a"] if diff else 0, s.total_rows))
    masks_card = _card("band-masks", "Masks", num(s.total_masks),
                       tag("div", text(f"{dec(s.masks_per_segment)} per segment"), cls="sub"),
                       _delta(d, diff["totals"]["masks_a"] if diff else 0, s.total_masks))
    if diff:
        lab = diff["labels"]
        moved = (f"{num(len(lab['new_labels']))} new, {num(len(lab['gone_labels']))} gone since {d.parent_name}"
                 if lab["new_labels"] or lab["gone_labels"] else f"none new or gone since {d.parent_name}")
        labels_delta = tag("div", text(moved), cls="delta")
        shift = _card("band-shift", "Label shift", dec(lab["js_divergence"], 4),
                      tag("div", text(f"Jensen-Shannon divergence from {d.parent_name} (0 = same shares, 1 = disjoint)"),
                          cls="sub"))
    else:
        labels_delta = _delta(d, 0, 0)
        shift = _card("band-shift", "Label shift", "–", tag("div", text("nothing to compare with"), cls="sub"),
                      _delta(d, 0, 0))
    labels_card = _card("band-labels", "Distinct labels", num(len(s.labels)),
                        tag("div", text(f"top: {', '.join(w for w, _ in s.ranked_labels(3))}"), cls="sub"),
                        labels_delta)
    r = d.review
    if r and r["overall"].get("precision") is not None:
        o = r["overall"]
        review_card = _card("band-review", "Reviewed precision", dec(o["precision"], 3),
                            tag("div", text(f"95% interval {dec(o['low'], 3)} – {dec(o['high'], 3)}, "
                                            f"{num(o['reviewed'])} masks reviewed"), cls="sub"))
    else:
        review_card = _card("band-review", "Reviewed precision", "–",
                            tag("div", text("no mask of this release reviewed by hand yet"), cls="sub"))
    return tag("div", [gate_card, rows_card, masks_card, labels_card, shift, review_card], cls="band", id="summary")


def _gate_delta(d: "ReportData") -> Markup:
    if d.parent is None:
        return _delta(d, 0, 0)
    pg = d.parent.manifest().get("gate")
    was = "not run" if not pg else ("passed" if pg.get("success") else "failed")
    return tag("div", text(f"{d.parent_name}: {was}"), cls="delta")


def _line(anchor: str, lead: str, body: str) -> Markup:
    return tag("li", [tag("a", text(lead), href=f"#{anchor}"), text(" " + body)])


def answers(d: "ReportData") -> Markup:
    """Each question the page answers, in one line of figures, linking to its section."""
    diff = d.diff
    if diff:
        t, lab, mps, w = diff["totals"], diff["labels"], diff["masks_per_segment"], diff["words_per_segment"]
        added = sum(c["added"] for c in diff["splits"].values())
        removed = sum(c["removed"] for c in diff["splits"].values())
        moved = ", ".join(x for x in (f"{num(len(lab['new_labels']))} new" if lab["new_labels"] else "",
                                      f"{num(len(lab['gone_labels']))} gone" if lab["gone_labels"] else "") if x)
        parent = (f"{change(t['rows_a'], t['rows_b'])} rows ({num(added)} added, {num(removed)} removed); label "
                  f"shares shifted by a Jensen-Shannon divergence of {dec(lab['js_divergence'], 4)}; "
                  f"{('labels ' + moved) if moved else 'no label new or gone'}; masks per segment {dec(mps['mean_a'])} → {dec(mps['mean_b'])}; "
                  f"words per segment {dec(w['a']['mean'], 1)} → {dec(w['b']['mean'], 1)}.")
    elif d.parent_missing:
        parent = f"its parent {d.parent_missing} is no longer in the warehouse."
    else:
        parent = f"this is the first release of {d.release.dataset}."
    far = [f for f in d.express.figures if f.far] + [x for x in d.express.labels if x.note]
    express = (f"{num(len(far))} of {num(len(d.express.figures) + len(d.express.labels))} figures far off: "
               + " ".join(f.note for f in far[:2]) + (" …" if len(far) > 2 else "")) if far else (
               "masks per segment, words per segment and the top labels' shares are all close to the paper's.")
    low = d.lowest
    look = (f"{num(len(low.shown))} masks kept with the least confidence (acceptance "
            f"{dec(low.shown[0].acceptance or 0.0, 3)} – {dec(low.shown[-1].acceptance or 0.0, 3)}) to check first."
            if low.shown else low.missing)
    examples = f"{num(len(d.examples))} top labels with {num(sum(len(x) for x in d.examples.values()))} segments; {look}"
    found = sorted(((n, mark) for mark, n, _ in d.placeholders.values() if n), reverse=True)
    pii = d.manifest.get("gate", {}) or {}
    privacy = ((f"{num(sum(n for n, _ in found))} placeholders ({', '.join(f'{m} {num(n)}' for n, m in found)})"
                if found else "no placeholders") + (" left by scrubbing; the gate's re-check found no personal data."
                                                    if pii.get("pii") else " left by scrubbing."))
    if not d.placeholders:
        privacy = "PII scrubbing was off for this build."
    r = d.review
    review = (f"{num(r['overall']['reviewed'])} masks reviewed by hand, precision "
              f"{dec(r['overall']['precision'], 3)}." if r and r["overall"].get("precision") is not None
              else "no mask reviewed by hand yet.")
    return tag("ul", [_line("changes", f"Since {d.parent_name}:" if d.parent else "Since the last release:", parent),
                      _line("express", "Against EXPRESS:", express),
                      _line("examples", "Examples:", examples),
                      _line("privacy", "Privacy:", privacy + " Review: " + review)], cls="answers", id="answers")
