"""What changed between two releases: rows per split, labels, masks per segment, lengths, the
funnel's reasons and subreddits. `express diff` prints it and the data-quality report draws it:
both call `compare`, so they cannot disagree."""
from __future__ import annotations

from collections import Counter
from typing import Any

from warehouse.releases.release import Release
from warehouse.releases.stats import ReleaseStats, Summary, example_key_changes, js_divergence, release_stats


def diff_releases(a: Release, b: Release, top: int = 15) -> dict[str, Any]:
    """The change from release `a` (older) to `b`."""
    fa, fb = a.split_files(), b.split_files()
    return compare(a, b, release_stats(fa), release_stats(fb), top)


def compare(a: Release, b: Release, sa: ReleaseStats, sb: ReleaseStats, top: int = 15) -> dict[str, Any]:
    """The change from `a` to `b` given both releases' statistics (the report has them already)."""
    ma, mb = a.manifest(), b.manifest()
    return {"a": a.release_id, "b": b.release_id,
            "splits": example_key_changes(a.split_files(), b.split_files()),
            "totals": {"rows_a": sa.total_rows, "rows_b": sb.total_rows, "masks_a": sa.total_masks,
                       "masks_b": sb.total_masks, "posts_a": sa.posts, "posts_b": sb.posts},
            "labels": label_change(sa.labels, sb.labels, top),
            "masks_per_segment": _side_by_side_table(sa.masks_per_example, sb.masks_per_example, "masks"),
            "words_per_segment": {"a": _summary(sa.words_summary), "b": _summary(sb.words_summary)},
            "funnel": funnel_change(ma.get("funnel") or {}, mb.get("funnel") or {}),
            "subreddits": _subreddits(sa.subreddits, sb.subreddits, top)}


def label_change(ca: Counter[str], cb: Counter[str], top: int = 15) -> dict[str, Any]:
    """Shares and counts of every label in both, the largest share changes, new and gone labels."""
    ta, tb = sum(ca.values()) or 1, sum(cb.values()) or 1
    rows = [{"label": w, "count_a": ca.get(w, 0), "count_b": cb.get(w, 0),
             "share_a": ca.get(w, 0) / ta, "share_b": cb.get(w, 0) / tb,
             "delta": cb.get(w, 0) / tb - ca.get(w, 0) / ta} for w in set(ca) | set(cb)]
    rows.sort(key=lambda r: (-r["count_b"], -r["count_a"], r["label"]))
    largest = sorted(rows, key=lambda r: (-abs(r["delta"]), r["label"]))[:top]
    return {"js_divergence": js_divergence(ca, cb), "masks_a": sum(ca.values()), "masks_b": sum(cb.values()),
            "distinct_a": len(ca), "distinct_b": len(cb),
            "new_labels": sorted(set(cb) - set(ca)), "gone_labels": sorted(set(ca) - set(cb)),
            "largest_changes": largest, "rows": rows}


def funnel_change(fa: dict[str, Any], fb: dict[str, Any]) -> dict[str, Any]:
    """The two funnels side by side: read, kept, malformed, and each drop reason as a count and as
    a share of the posts read."""
    read_a, read_b = fa.get("read", 0), fb.get("read", 0)
    da, db = fa.get("dropped") or {}, fb.get("dropped") or {}
    reasons = sorted(set(da) | set(db), key=lambda r: (-db.get(r, 0), -da.get(r, 0), r))
    return {"read_a": read_a, "read_b": read_b, "kept_a": fa.get("kept", 0), "kept_b": fb.get("kept", 0),
            "malformed_a": fa.get("malformed", 0), "malformed_b": fb.get("malformed", 0),
            "dropped": [{"reason": r, "count_a": da.get(r, 0), "count_b": db.get(r, 0),
                         "share_a": da.get(r, 0) / read_a if read_a else 0.0,
                         "share_b": db.get(r, 0) / read_b if read_b else 0.0} for r in reasons]}


def _side_by_side_table(ta: dict[int, int], tb: dict[int, int], key: str) -> dict[str, Any]:
    na, nb = sum(ta.values()) or 1, sum(tb.values()) or 1
    rows = [{key: k, "count_a": ta.get(k, 0), "count_b": tb.get(k, 0), "share_a": ta.get(k, 0) / na,
             "share_b": tb.get(k, 0) / nb} for k in sorted(set(ta) | set(tb))]
    return {"mean_a": Summary.of(ta).mean, "mean_b": Summary.of(tb).mean, "rows": rows}


def _summary(s: Summary) -> dict[str, Any]:
    return {"segments": s.count, "mean": s.mean, "median": s.median, "min": s.min, "max": s.max}


def _subreddits(a: dict[str, int], b: dict[str, int], top: int) -> dict[str, Any]:
    names = sorted(set(a) | set(b), key=lambda s: (-b.get(s, 0), -a.get(s, 0), s))[:top]
    return {"distinct_a": len(a), "distinct_b": len(b),
            "top": [{"subreddit": s, "count_a": a.get(s, 0), "count_b": b.get(s, 0)} for s in names]}


def format_diff(d: dict[str, Any]) -> str:
    """The diff as plain text, figure for figure what the report's comparison shows."""
    t, lab, mps, w, f = d["totals"], d["labels"], d["masks_per_segment"], d["words_per_segment"], d["funnel"]
    lines = [f"{d['a']} -> {d['b']}", "split        rows_a  rows_b   added  removed"]
    for split, s in d["splits"].items():
        lines.append(f"{split:<12}{s['rows_a']:>7}{s['rows_b']:>8}{s['added']:>+8}{-s['removed']:>+9}")
    lines.append(f"{'total':<12}{t['rows_a']:>7}{t['rows_b']:>8}")
    lines.append(f"labels: JS divergence {lab['js_divergence']:.4f}; masks {lab['masks_a']} -> {lab['masks_b']}; "
                 f"distinct {lab['distinct_a']} -> {lab['distinct_b']}")
    lines.append(f"  new ({len(lab['new_labels'])}): {', '.join(lab['new_labels']) or '-'}")
    lines.append(f"  gone ({len(lab['gone_labels'])}): {', '.join(lab['gone_labels']) or '-'}")
    lines.append("label            share_a  share_b    delta")
    for r in lab["largest_changes"]:
        lines.append(f"{r['label']:<16}{r['share_a']:>8.2%}{r['share_b']:>9.2%}{r['delta']:>+9.2%}")
    lines.append(f"masks per segment: mean {mps['mean_a']:.2f} -> {mps['mean_b']:.2f}; "
                 + ", ".join(f"{r['masks']}: {r['share_a']:.1%} -> {r['share_b']:.1%}" for r in mps["rows"]))
    lines.append(f"words per segment: mean {w['a']['mean']:.1f} -> {w['b']['mean']:.1f}; median {w['a']['median']} -> "
                 f"{w['b']['median']}; range {w['a']['min']}-{w['a']['max']} -> {w['b']['min']}-{w['b']['max']}")
    lines.append(f"funnel: read {f['read_a']} -> {f['read_b']}; kept {f['kept_a']} -> {f['kept_b']}; "
                 f"malformed {f['malformed_a']} -> {f['malformed_b']}")
    for r in f["dropped"]:
        lines.append(f"  dropped {r['reason']:<22}{r['count_a']:>7} ({r['share_a']:.1%}) -> {r['count_b']} "
                     f"({r['share_b']:.1%})")
    sub = d["subreddits"]
    lines.append(f"subreddits: {sub['distinct_a']} -> {sub['distinct_b']}; top: "
                 + ", ".join(f"{r['subreddit']} {r['count_a']} -> {r['count_b']}" for r in sub["top"]))
    return "\n".join(lines)
