"""A one-page, self-contained HTML data-quality report of a release (inline CSS, base64 PNG charts).

Nothing in the page loads from the network, so it opens offline; GX Data Docs are linked beside it.
"""
from __future__ import annotations

import base64
import html
import io
import os
from collections import Counter
from pathlib import Path
from typing import Any

from schemas.lexicon import DIMS, Decomposition, default_decomposition
from warehouse.publish import Release
from warehouse.stats import ReleaseStats, release_stats

SECTIONS = ("funnel", "labels", "plutchik", "masks", "lengths", "subreddits", "gate")
CSS = """body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1000px;color:#222}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:.25em .6em;text-align:left}
th{background:#f4f4f4}.ok{color:#1a7f37;font-weight:bold}.bad{color:#cf222e;font-weight:bold}
img{max-width:100%}.muted{color:#666}code{background:#f4f4f4;padding:0 .2em}"""


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return f'<img alt="chart" src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}">'


def _bar(labels: list[str], values: list[float], title: str, horizontal: bool = False) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, max(3, 0.22 * len(labels)) if horizontal else 3.5))
    if horizontal:
        ax.barh(labels[::-1], values[::-1], color="#4c72b0")
    else:
        ax.bar(labels, values, color="#4c72b0")
        ax.tick_params(axis="x", labelrotation=45 if len(labels) > 6 else 0)
    ax.set_title(title)
    return _png(fig)


def _hist(values: list[int], title: str, xlabel: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 3.5))
    ax.hist(values or [0], bins=40, color="#55a868")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    return _png(fig)


def _table(head: list[str], rows: list[list[Any]]) -> str:
    th = "".join(f"<th>{html.escape(str(h))}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{th}</tr>{body}</table>"


def dimension_shares(labels: Counter[str], dec: Decomposition) -> dict[str, float]:
    """Share of masks whose label has each Plutchik/valence dimension (plus words with none)."""
    total = sum(labels.values()) or 1
    shares = {d: 0.0 for d in DIMS}
    none = 0
    for word, n in labels.items():
        vec = dec.vector(word)
        if not any(vec):
            none += n
        for d, v in zip(DIMS, vec):
            shares[d] += n * v
    out = {d: v / total for d, v in shares.items()}
    out["(no dimension)"] = none / total
    return out


def render_report(release: Release, out: Path, docs_link: str | None = None,
                  review: dict[str, Any] | None = None) -> Path:
    """Write the report HTML to `out` and return it; `review`: the release's hand-review figures
    (review.stats.release_review), None when nothing was reviewed."""
    m = release.manifest()
    stats = release_stats(release.split_files())
    parts = [f"<h1>Data-quality report: {html.escape(m['dataset'])} {html.escape(m['version'])}</h1>",
             f"<p class=muted>created {html.escape(str(m.get('created')))} · code {html.escape(str(m.get('code_version')))}"
             f" · parent {html.escape(str(m.get('parent_version')))} · rows {html.escape(str(m.get('rows')))}</p>"]
    parts += _funnel(m)
    parts += _labels(stats)
    dims = dimension_shares(stats.labels, default_decomposition())
    parts += ['<h2 id="plutchik">Plutchik-dimension shares</h2>',
              "<p>Share of masks whose label carries each dimension of the 10-dim decomposition.</p>",
              _bar(list(dims), list(dims.values()), "share of masks per dimension"),
              _table(["dimension", "share"], [[d, f"{v:.1%}"] for d, v in dims.items()])]
    parts += ['<h2 id="masks">Masks per example</h2>',
              _bar([str(k) for k in stats.masks_per_example], list(stats.masks_per_example.values()), "examples by masks"),
              _table(["masks", "examples"], [[k, v] for k, v in stats.masks_per_example.items()]),
              _table(["segments per post", "posts"], [[k, v] for k, v in stats.segments_per_post.items()])]
    words = stats.words_per_example
    parts += ['<h2 id="lengths">Length</h2>', _hist(words, "words per example", "words"),
              f"<p>min {min(words, default=0)}, median {sorted(words)[len(words) // 2] if words else 0}, "
              f"max {max(words, default=0)} words.</p>"]
    subs = list(stats.subreddits.items())
    parts += ['<h2 id="subreddits">Per-subreddit counts</h2>',
              _bar([s for s, _ in subs[:40]], [n for _, n in subs[:40]], "examples per subreddit (top 40)", True),
              _table(["subreddit", "examples"], [[s, n] for s, n in subs])]
    parts += _gate(m, docs_link)
    parts += review_section(review)
    page = (f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{html.escape(m['dataset'])} "
            f"{html.escape(m['version'])} report</title><style>{CSS}</style></head><body>{''.join(parts)}</body></html>")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out


def _funnel(m: dict[str, Any]) -> list[str]:
    f = m.get("funnel") or {}
    dropped = f.get("dropped", {})
    rows = [["read", f.get("read", "n/a")], ["kept", f.get("kept", "n/a")], ["malformed", f.get("malformed", "n/a")]]
    rows += [[f"dropped: {k}", v] for k, v in sorted(dropped.items(), key=lambda kv: -kv[1])]
    out = ['<h2 id="funnel">Funnel</h2>', "<p>read = kept + dropped + malformed, over all stages.</p>",
           _table(["", "posts"], rows)]
    if dropped:
        out.append(_bar(list(dropped), list(dropped.values()), "dropped posts by reason", True))
    for stage, sf in (m.get("stages") or {}).items():
        out.append(f"<p><b>{html.escape(stage)}</b>: read {sf.get('read')}, kept {sf.get('kept')}, "
                   f"malformed {sf.get('malformed')}, dropped {html.escape(str(sf.get('dropped')))}</p>")
    return out


def _labels(stats: ReleaseStats) -> list[str]:
    total = sum(stats.labels.values()) or 1
    ranked = stats.labels.most_common()
    top, tail = ranked[:50], ranked[50:]
    tail_masks = sum(n for _, n in tail)
    singletons = sum(1 for _, n in ranked if n == 1)
    return ['<h2 id="labels">Label distribution</h2>',
            f"<p>{len(ranked)} distinct labels over {sum(stats.labels.values())} masks.</p>",
            _bar([w for w, _ in top], [n for _, n in top], "top 50 labels (masks)", True),
            "<h3>Long tail</h3>",
            f"<p>{len(tail)} labels beyond the top 50 hold {tail_masks} masks ({tail_masks / total:.1%}); "
            f"{singletons} labels occur once.</p>",
            _table(["label", "masks"], [[w, n] for w, n in tail[:200]]) if tail else "<p>No long tail.</p>"]


def _gate(m: dict[str, Any], docs_link: str | None) -> list[str]:
    g = m.get("gate")
    out = ['<h2 id="gate">Quality-gate results</h2>']
    if not g:
        return out + ["<p>The gate was not run for this release.</p>"]
    verdict = '<span class=ok>passed</span>' if g.get("success") else '<span class=bad>failed</span>'
    out.append(f"<p>Gate {verdict}; largest label share {g.get('max_label_share'):.3f}; label JS divergence vs "
               f"parent {g.get('parent')}: {g.get('label_js_divergence')}; vocabulary {html.escape(str(g.get('vocabulary')))}.</p>")
    out.append(_table(["suite", "version", "table", "result", "expectations passed"],
                      [[s["name"], s["version"], s["table"], "passed" if s["success"] else "FAILED",
                        f"{s['statistics']['successful_expectations']}/{s['statistics']['evaluated_expectations']}"]
                       for s in g.get("suites", [])]))
    out.append(_table(["parameter", "value"], [[k, v] for k, v in (g.get("parameters") or {}).items()]))
    if docs_link:
        out.append(f'<p>Full GX results: <a href="{html.escape(docs_link)}">Great Expectations Data Docs</a> '
                   "(static files beside the release).</p>")
    return out


def review_section(review: dict[str, Any] | None) -> list[str]:
    """Reviewed precision, shown only when masks of this release were reviewed by hand."""
    if not review:
        return []
    o = review["overall"]
    out = ['<h2 id="review">Reviewed precision (hand review)</h2>',
           f"<p>{o['reviewed']} masks of this release reviewed by {len(review['reviewers'])} reviewer(s) "
           f"(ledger v{review['ledger_version']}, sha256 <code>{review['ledger_sha256'][:12]}</code>): "
           f"precision <b>{o['precision']:.3f}</b>, Wilson 95 % interval [{o['low']:.3f}, {o['high']:.3f}]; "
           f"{o['accepted']} accepted, {o['rejected']} rejected.</p>"]
    for key in ("pattern", "rule"):
        rows = [[name, p["reviewed"], f"{p['precision']:.3f}", f"[{p['low']:.3f}, {p['high']:.3f}]"]
                for name, p in review[f"by_{key}"].items()]
        out.append(_table([key, "reviewed", "precision", "95 % interval"], rows))
    ag = review.get("agreement")
    if ag and ag.get("fleiss_kappa") is not None:
        out.append(f"<p>Fleiss' kappa {ag['fleiss_kappa']:.3f} on {ag['fleiss_items']} items all reviewers rated.</p>")
    return out


def docs_link_for(release: Release, report: Path) -> str | None:
    docs = release.path / "gate" / "data_docs" / "index.html"
    return os.path.relpath(docs, report.parent) if docs.exists() else None
