"""What changed between two releases: rows added/removed per split, and the label distribution."""
from __future__ import annotations

from collections import Counter
from typing import Any

from warehouse.gate import js_divergence, label_counts
from warehouse.publish import Release
from warehouse.splits import SPLITS
from warehouse.stats import example_keys


def diff_releases(a: Release, b: Release, top: int = 15) -> dict[str, Any]:
    """Rows keyed by (post_id, segment_index); label change as shares, counts and JS divergence."""
    fa, fb = a.split_files(), b.split_files()
    splits: dict[str, dict[str, int]] = {}
    for split in SPLITS:
        if split not in fa and split not in fb:
            continue
        ka = example_keys(fa[split]) if split in fa else set()
        kb = example_keys(fb[split]) if split in fb else set()
        splits[split] = {"rows_a": len(ka), "rows_b": len(kb), "added": len(kb - ka),
                         "removed": len(ka - kb), "kept": len(ka & kb)}
    ca, cb = label_counts(fa), label_counts(fb)
    return {"a": f"{a.dataset}/{a.version}", "b": f"{b.dataset}/{b.version}", "splits": splits,
            "labels": label_change(ca, cb, top)}


def label_change(ca: Counter[str], cb: Counter[str], top: int = 15) -> dict[str, Any]:
    ta, tb = sum(ca.values()) or 1, sum(cb.values()) or 1
    rows = [{"label": w, "count_a": ca.get(w, 0), "count_b": cb.get(w, 0),
             "share_a": ca.get(w, 0) / ta, "share_b": cb.get(w, 0) / tb,
             "delta": cb.get(w, 0) / tb - ca.get(w, 0) / ta} for w in set(ca) | set(cb)]
    rows.sort(key=lambda r: (-abs(r["delta"]), r["label"]))
    return {"js_divergence": js_divergence(ca, cb), "masks_a": sum(ca.values()), "masks_b": sum(cb.values()),
            "new_labels": sorted(set(cb) - set(ca)), "gone_labels": sorted(set(ca) - set(cb)),
            "largest_changes": rows[:top]}


def format_diff(d: dict[str, Any]) -> str:
    lines = [f"{d['a']} -> {d['b']}", "split        rows_a  rows_b   added  removed"]
    for split, s in d["splits"].items():
        lines.append(f"{split:<12}{s['rows_a']:>7}{s['rows_b']:>8}{s['added']:>+8}{-s['removed']:>+9}")
    lab = d["labels"]
    lines.append(f"labels: JS divergence {lab['js_divergence']:.4f}; masks {lab['masks_a']} -> {lab['masks_b']}; "
                 f"new {lab['new_labels'][:10]}; gone {lab['gone_labels'][:10]}")
    lines.append("label            share_a  share_b    delta")
    for r in lab["largest_changes"]:
        lines.append(f"{r['label']:<16}{r['share_a']:>8.2%}{r['share_b']:>9.2%}{r['delta']:>+9.2%}")
    return "\n".join(lines)
