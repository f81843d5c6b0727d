"""The run report's live-benchmark sections: the window scored, every metric before and after the
model's knowledge cutoff, and the memorization probe (docs/live.md says how to read them)."""
from __future__ import annotations

from typing import Any

from common.progress import duration
from evaluation.live.timesplit import METRICS
from schemas.config import BOTH_PROBES, probe_kinds


def _num(value: float | None, fmt: str = "{:.4f}") -> str:
    return "-" if value is None else fmt.format(value)


def window_line(config: dict[str, Any], analysis: dict[str, Any] | None = None) -> str:
    """The window asked for and, when the run answered fewer rows than it held, what its rows span."""
    w = config.get("window")
    sample = f" {sample_text(config['sample'], 'scored')}" if config.get("sample") else ""
    if not w:
        line = "Every row of the split, whenever it was posted."
    else:
        asked = " and ".join(s for s in (f"at or after {w['posted_after']}" if w.get("posted_after") else "",
                                         f"before {w['posted_before']}" if w.get("posted_before") else "") if s)
        line = f"Rows posted {asked} (UTC): {config.get('window_rows', '?')} of the split."
    span, rows, held = (analysis or {}).get("span"), (analysis or {}).get("rows"), config.get("window_rows")
    if span and rows is not None and held is not None and rows < held:
        line += f" The run scored {rows} of them, posted {span['first']} to {span['last']}."
    return line + sample


def sample_text(sample: dict[str, Any], verb: str) -> str:
    """`A sample was scored: 40 rows drawn at random (seed 0; 40 asked), spread over both sides of the cutoff
    and the months (before 2024-01: 20 of 61, after 2024-02: 20 of 33).`"""
    strata = ", ".join(f"{(s['side'] + ' ') if s['side'] else ''}{s['month']}: {s['drawn']} of {s['rows']}"
                       for s in sample["strata"])
    return (f"A sample was {verb}: {sample['drawn']} rows drawn at random (seed {sample['seed']}; {sample['rows']} "
            f"asked), spread over " + ("both sides of the cutoff and " if sample.get("cutoff") else "")
            + f"the months ({strata}).")


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
    kinds = probe_kinds(probe.get("probe") or BOTH_PROBES)
    asked = [f"Min-K% Prob (k = {s['min_k_percent']:g} %) of each row's unmasked text" if "min-k" in kinds else "",
             "a continuation probe (the first half shown, the answer compared with the true second half: the longest "
             f"common run of words, the share of the answer's {s['overlap_words']}-word runs found in it)"
             if "continuation" in kinds else ""]
    said = " and ".join(a for a in asked if a)
    lines = ["", "## Memorization probe", "",
             f"{said[0].upper()}{said[1:]}. Probe settings {s['version']}; "
             "a low score proves nothing (docs/live.md)."]
    if probe.get("sample"):
        lines += ["", sample_text(probe["sample"], "probed")]
    timing = probe.get("timing") or {}
    if timing.get("first_estimate"):
        first = timing["first_estimate"]
        lines += ["", f"The probe took {duration(timing['seconds'])} for {timing['rows']} rows; after its first "
                      f"{first['after_rows']} it estimated {duration(first['estimate_seconds'])}."]
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
        low_high = auc.get("interval")
        interval = f", 95 % interval {low_high[0]:.3f} to {low_high[1]:.3f}" if low_high else ""
        lines += ["", f"AUC of Min-K% Prob for telling rows posted before the cutoff from rows after it: "
                      f"{_num(auc['auc'], '{:.3f}')}" + (f" ({auc['note']})" if auc.get("note") else
                                                          f" ({auc['before']} before, {auc['after']} after{interval})")]
    return lines + ["", READING]


READING = (
    "**How to read it.** The AUC is the chance that a row posted before the cutoff has a higher Min-K% Prob (looks "
    "more familiar to the model) than a row posted after it: 0.5 is chance, 1.0 a perfect split; its 95 % interval "
    "resamples each side's rows (seeded). An interval wholly above 0.5 says the model finds the posts it could have "
    "read more familiar: what memorization would look like, not proof of it, since the months also differ in topic, "
    "style and length, which move Min-K% without any memory; compare models with other cutoffs on the same rows and "
    "read it beside the before/after scores. Below 0.5, the later posts look more familiar: a change in the text, not "
    "memory. An interval that spans 0.5 says these rows cannot tell, and a value near 0.5 does not show the posts "
    "were unread: both probes find near-verbatim memory only, a small model keeps little of what it read, and on "
    "posts of one kind such tests often do little better than chance. In the continuations, a long run of shared "
    "words is the stronger sign; a few shared words are what common phrases give.")
