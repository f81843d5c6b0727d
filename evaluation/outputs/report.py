"""A Markdown report with PNG charts for one run: human vs model label frequency (the paper's
top-label comparison), per-dimension scores, label -> prediction confusions, intervals, the
emotion-word rate, scores per month of posting and per gold word."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from schemas.lexicon import DIMS

from evaluation.outputs.live_report import cutoff_lines, probe_lines, window_line
from evaluation.live.timesplit import METRICS
from warehouse.layout import EvaluationPaths


def _bar_labels(analysis: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    freq = analysis["label_frequency"]
    labels = [f["label"] for f in freq]
    h_total = analysis["distribution"]["human"]["masks"] or 1
    m_total = analysis["distribution"]["model"]["masks"] or 1
    x = np.arange(len(labels))
    fig, ax = plt.subplots(figsize=(max(6, len(labels) * 0.55), 4))
    ax.bar(x - 0.2, [f["human"] / h_total for f in freq], 0.4, label="human (self-disclosed)")
    ax.bar(x + 0.2, [f["model"] / m_total for f in freq], 0.4, label="model")
    ax.set_xticks(x, labels, rotation=60, ha="right")
    ax.set_ylabel("share of masks")
    ax.set_title("Most frequent labels: human vs model")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _bar_dims(analysis: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    per = analysis["per_dimension"]
    x = np.arange(len(DIMS))
    fig, ax = plt.subplots(figsize=(8, 3.8))
    for offset, key in ((-0.27, "precision"), (0.0, "recall"), (0.27, "f1")):
        ax.bar(x + offset, [per[d][key] for d in DIMS], 0.27, label=key)
    ax.set_xticks(x, DIMS, rotation=45, ha="right")
    ax.set_ylim(0, 1)
    ax.set_title("Per-dimension scores (masks of valid rows)")
    ax.legend(ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _cell(text: str) -> str:
    """An answer quoted in a Markdown table cell."""
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`"


def _interval(lo_hi: list[float] | None) -> str:
    return f"{lo_hi[0]:.4f} to {lo_hi[1]:.4f}" if lo_hi else "-"


LABELS_SHOWN = 30  # gold words in the report's table; analysis.json `labels` holds them all


def emotion_word_lines(metrics: dict[str, Any], analysis: dict[str, Any]) -> list[str]:
    """The flag of a run whose answers have the right shape but are mostly not emotion words."""
    ew = analysis.get("emotion_words") or {}
    if not ew.get("flagged"):
        return []
    others = ", ".join(f"{_cell(w)} ({c})" for w, c in ew["not_emotion_words"])
    limits = ew["thresholds"]
    return ["", f"**Answers that are not emotion words.** VRate is {metrics['VRate']:.2f}, so the answers have the "
                f"right shape, but only {ew['emotion_words']} of {ew['answers']} answered words "
                f"({ew['EWRate']:.1%}) are words of the vocabulary ({ew['vocabulary']}). The commonest others: {others}. "
                "VRate counts answers of the right shape, not emotion words found: a model held to a list (structured "
                "answers) fills it whether or not it found one, and a baseline may answer outside the vocabulary by "
                f"design (`all-zero`). Flagged at VRate >= {limits['VRate_high']:g} with an emotion-word rate below "
                f"{limits['EWRate_low']:g} (docs/evaluation.md)."]


def month_lines(analysis: dict[str, Any]) -> list[str]:
    months = analysis.get("months") or {}
    if not months:
        return []
    lines = ["", "## Per month of posting", "",
             "| month (UTC) | rows | AccL | 95 % interval | F1V | 95 % interval | VRate | EWRate |", "|---|---|---|---|---|---|---|---|"]
    for m, s in months.items():
        ci = s["intervals"]
        lines.append(f"| {m} | {s['rows']} | {s['AccL']:.4f} | {_interval(ci.get('AccL'))} | {s['F1V']:.4f} | "
                     f"{_interval(ci.get('F1V'))} | {s['VRate']:.4f} | "
                     f"{'-' if s['EWRate'] is None else format(s['EWRate'], '.4f')} |")
    return lines


def label_lines(analysis: dict[str, Any]) -> list[str]:
    labels = analysis.get("labels") or []
    lines = ["Per gold word, commonest first: AccL over its masks, masks of invalid answers, and the model's "
             "most frequent wrong answers.", "",
             "| gold word | masks | AccL | invalid | most frequent wrong answers (count) |", "|---|---|---|---|---|"]
    lines += [f"| {g['gold']} | {g['masks']} | {g['AccL']:.4f} | {g['invalid']} | "
              f"{', '.join(f'{_cell(p)} ({c})' for p, c in g['wrong']) or '-'} |" for g in labels[:LABELS_SHOWN]]
    if len(labels) > LABELS_SHOWN:
        lines += ["", f"{len(labels) - LABELS_SHOWN} more gold words in analysis.json (`labels`)."]
    return lines


def rescored_lines(config: dict[str, Any], analysis: dict[str, Any]) -> list[str]:
    """What a takedown took out of the run, and what it did to the metrics (config.json `takedowns`)."""
    record = config.get("takedowns")
    if not record:
        return []
    probed = record.get("probe_rows_removed", 0)
    lines = ["", "## Rescored after a takedown", "",
             f"{record['rows_removed']} rows of taken-down posts left this run"
             + (f", and {probed} of its probe rows" if probed else "")
             + "; every number of this report is computed from the rows left.", ""]
    history = record.get("rescored") or []
    if history:
        lines += ["| ledger version | rows removed | rows | " + " | ".join(METRICS) + " |", "|---" * (3 + len(METRICS)) + "|"]
    for e in history:
        before, after = e.get("before") or {}, e.get("after") or {}
        change = [f"{before[m]:.4f} -> {after[m]:.4f}" if m in before and m in after else "-" for m in METRICS]
        lines.append(f"| {e['ledger_version']} | {e['rows_removed']} | {before.get('rows', '?')} -> {after.get('rows', '?')} | "
                     + " | ".join(change) + " |")
    kept = analysis.get("kept_as_answered") or []
    if kept:
        lines += ["", f"Kept as the run was answered, not recomputed from the rows left: {', '.join(kept)}."]
    return lines


def write_report(run_dir: str | Path) -> Path:
    """Write `<run>/report/report.md` and its PNG charts from the run's stored numbers; returns the
    Markdown path."""
    run = Path(run_dir)
    paths = EvaluationPaths(Path(run))
    config = json.loads(paths.config.read_text())
    metrics = json.loads(paths.metrics.read_text())
    analysis = json.loads(paths.analysis.read_text())
    out = paths.report_dir
    out.mkdir(exist_ok=True)
    _bar_labels(analysis, out / "label_frequency.png")
    _bar_dims(analysis, out / "per_dimension.png")
    ci = analysis.get("intervals", {})
    dist = analysis["distribution"]
    lines = [
        f"# Evaluation report: {config['predictor']} ({config.get('setting', '-')}"
        f"{', ' + config['model'] if config.get('model') else ''})", "",
        f"Release `{config['release']}`, split `{config['split']}`, run `{config.get('run_id', run.name)}`, "
        f"{metrics['rows']} rows, {metrics['masks']} masks. {window_line(config, analysis)}", "",
        "| metric | value | 95 % interval |", "|---|---|---|",
    ]
    if speed := analysis.get("throughput"):
        lines[-2:-2] = [f"Answered in {speed['seconds']:.1f} s: {speed['rows_per_s']:.2f} rows/s, "
                        f"{speed['new_completion_tokens_per_s']:.1f} new answer tokens/s.", ""]
    for m, value in (*((m, metrics[m]) for m in ("AccL", "AccV", "F1V", "VRate")), ("Hamming", analysis["Hamming"])):
        lines.append(f"| {m} | {value:.4f} | {_interval(ci.get(m))} |")
    ew = analysis.get("emotion_words") or {}
    if ew:
        rate = "-" if ew["EWRate"] is None else f"{ew['EWRate']:.4f}"
        lines.append(f"| EWRate: answered words that are emotion words (vocabulary {ew['vocabulary']}) | {rate} | - |")
    lines.append(f"| canonical accuracy ({analysis['canonical_mapping']}) | {analysis['canonical_accuracy']:.4f} | - |")
    for k, v in (analysis.get("top_k") or {}).items():
        lines.append(f"| top-{k} accuracy | {v:.4f} | - |")
    lines += emotion_word_lines(metrics, analysis)
    lines += rescored_lines(config, analysis) + cutoff_lines(config, analysis) + month_lines(analysis)
    lines += probe_lines(analysis)
    shapes = analysis.get("invalid_shapes") or []
    if shapes:
        lines += ["", "## Invalid answers", "",
                  f"{analysis['invalid_rows']} of {metrics['rows']} answers were not a list of as many words as masks. "
                  "The commonest shapes:", "", "| shape | rows | examples |", "|---|---|---|"]
        lines += [f"| {s['shape']} | {s['rows']} | {' / '.join(_cell(e) for e in s['examples'])} |" for s in shapes]
    lines += ["", "## Label distributions", "",
              "| | masks | distinct labels | entropy (bits) | share of top label |", "|---|---|---|---|---|"]
    for who in ("human", "model"):
        d = dist[who]
        top = d["top"][0][0] if d["top"] else "-"
        lines.append(f"| {who} | {d['masks']} | {d['distinct']} | {d['entropy_bits']:.3f} | {d['top_share']:.3f} ({top}) |")
    lines += ["", f"Jensen-Shannon divergence (bits): {dist['jensen_shannon_bits']:.4f}", "",
              "![label frequency](label_frequency.png)", "", "## Per-dimension scores", "",
              "| dimension | precision | recall | F1 | support |", "|---|---|---|---|---|"]
    for d in DIMS:
        s = analysis["per_dimension"][d]
        lines.append(f"| {d} | {s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f} | {s['support']} |")
    lines += ["", "![per-dimension scores](per_dimension.png)", "", "## Confusions", "", *label_lines(analysis),
              "", "The most frequent pairs of a human label and a different answer:", "",
              "| human | model | count |", "|---|---|---|"]
    lines += [f"| {c['gold']} | {c['predicted']} | {c['count']} |" for c in analysis["confusions"]]
    md = paths.report
    md.write_text("\n".join(lines) + "\n")
    return md
