"""The run report's live-benchmark sections: the window scored, every metric before and after the
model's knowledge cutoff, and the memorization probe (docs/live.md says how to read them)."""
from __future__ import annotations

from typing import Any

from evaluation.live.timesplit import METRICS


def _num(value: float | None, fmt: str = "{:.4f}") -> str:
    return "-" if value is None else fmt.format(value)


def window_line(config: dict[str, Any], analysis: dict[str, Any] | None = None) -> str:
    """The window asked for and, when the run answered fewer rows than it held, what its rows span."""
    w = config.get("window")
    if not w:
        line = "Every row of the split, whenever it was posted."
    else:
        asked = " and ".join(s for s in (f"at or after {w['posted_after']}" if w.get("posted_after") else "",
                                         f"before {w['posted_before']}" if w.get("posted_before") else "") if s)
        line = f"Rows posted {asked} (UTC): {config.get('window_rows', '?')} of the split."
    span, rows, held = (analysis or {}).get("span"), (analysis or {}).get("rows"), config.get("window_rows")
    if span and rows is not None and held is not None and rows < held:
        line += f" The run scored {rows} of them, posted {span['first']} to {span['last']}."
    return line


def cutoff_lines(config: dict[str, Any], analysis: dict[str, Any]) -> list[str]:
    if "cutoff" not in config:  # a run stored before cutoffs
        return []
    cutoff = config["cutoff"] or {}
    lines = ["", "## Before and after the knowledge cutoff", ""]
    if not cutoff.get("cutoff"):
        return lines + [f"No cutoff: {cutoff.get('source', 'the run predates cutoffs')}."]
    split = analysis.get("cutoff") or {}
    lines.append(f"Cutoff {cutoff['cutoff']} ({cutoff['source']}"
                 + (f", stated as {cutoff['stated']}" if cutoff.get("stated") else "") + "): the model may have "
                 "read the rows posted before it, and cannot have read those posted on or after it.")
    if "before" not in split:
        return lines + ["", split.get("note", "not computed")]
    b, a = split["before"], split["after"]
    lines += ["", f"| metric | before ({b['rows']} rows) | after ({a['rows']} rows) | after - before | 95 % interval |",
              "|---|---|---|---|---|"]
    diff = split.get("difference")
    for m in METRICS:
        d = diff[m] if diff else None
        interval = f"{d['interval'][0]:+.4f} to {d['interval'][1]:+.4f}" if d and d.get("interval") else "-"
        lines.append(f"| {m} | {_num(b.get(m))} | {_num(a.get(m))} | "
                     f"{_num(d['value'], '{:+.4f}') if d else 'not told'} | {interval} |")
    if split.get("note"):
        lines += ["", f"No difference is given: {split['note']}."]
    return lines


def probe_lines(analysis: dict[str, Any]) -> list[str]:
    probe = analysis.get("probe")
    if not probe:
        return []
    s = probe["settings"]
    overlap = f"overlap_{s['overlap_words']}"
    lines = ["", "## Memorization probe", "",
             f"Min-K% Prob (k = {s['min_k_percent']:g} %) of each row's unmasked text, and a continuation probe "
             f"(the first half shown, the answer compared with the true second half: the longest common run of words, "
             f"the share of the answer's {s['overlap_words']}-word runs found in it). Probe settings {s['version']}; "
             "a low score proves nothing (docs/live.md)."]
    if probe.get("min_k_unavailable"):
        lines += ["", f"Min-K% Prob not computed: {probe['min_k_unavailable']}."]
    groups = [("all rows", probe["all"])]
    groups += [(f"before {probe['cutoff']}", probe["before"]), (f"after {probe['cutoff']}", probe["after"])] \
        if probe.get("cutoff") else []
    groups += [(f"posted {m}", g) for m, g in probe["months"].items()]
    lines += ["", f"| rows | count | Min-K% Prob | longest common run | {s['overlap_words']}-word overlap |",
              "|---|---|---|---|---|"]
    lines += [f"| {name} | {g['rows']} | {_num(g['min_k_prob'])} | {_num(g['longest_common_run'], '{:.1f}')} | "
              f"{_num(g[overlap], '{:.3f}')} |" for name, g in groups]
    auc = probe.get("min_k_auc")
    if auc:
        lines += ["", f"AUC of Min-K% Prob for telling rows posted before the cutoff from rows after it: "
                      f"{_num(auc['auc'], '{:.3f}')}" + (f" ({auc['note']})" if auc.get("note") else
                                                          f" ({auc['before']} before, {auc['after']} after)")]
    return lines
