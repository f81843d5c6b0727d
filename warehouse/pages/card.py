"""Export a release as a Hugging Face dataset folder: README.md (DatasetCard), Parquet files, croissant.json.

Re-exporting into a folder that already has a card merges: keys the user added to the YAML are
kept (and their licence/pretty name win), list keys are unioned, computed keys are refreshed;
text outside the generated block of the body is kept as written.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from warehouse.layout import CardPaths
from warehouse.pages.croissant import write_croissant
from warehouse.pages.pii_statement import pii_statement
from warehouse.releases.release import Release
from warehouse.releases.stats import release_stats, size_category

BEGIN, END = "<!-- express:card:begin -->", "<!-- express:card:end -->"
UNION_KEYS = ("task_categories", "language", "tags", "task_ids")
USER_WINS = ("license", "license_name", "license_link", "pretty_name")


def export_card(release: Release, card: CardPaths, url: str = "", review: dict[str, Any] | None = None,
                linked_report: bool = False) -> dict[str, Path]:
    """Write the card folder's README.md, data/*.parquet and croissant.json for one release; `review`:
    its hand-review figures (review.stats.release_review), None when nothing was reviewed;
    `linked_report`: the card links the data-quality report written beside it."""
    out_dir = card.root
    from huggingface_hub import DatasetCard, DatasetCardData

    manifest = release.manifest()
    cfg = manifest.get("config", {}).get("dataset", {})
    out_dir.mkdir(parents=True, exist_ok=True)
    card.data.mkdir(exist_ok=True)
    for old in card.data.glob("*-of-*.parquet"):
        old.unlink()
    files: dict[str, str] = {}
    for split, src in release.split_files().items():
        rel = str(src.relative_to(release.path))
        shutil.copyfile(src, out_dir / rel)
        files[split] = rel
    stats = release_stats({s: out_dir / r for s, r in files.items()})
    generated = {
        "license": cfg.get("license") or "other",
        "license_name": cfg.get("license_name") or "express-research-use",
        "pretty_name": cfg.get("pretty_name") or f"{manifest['dataset']} ({manifest['version']})",
        "language": ["en"],
        "task_categories": ["fill-mask", "text-classification"],
        "size_categories": [size_category(stats.total_rows)],
        "tags": ["emotion", "reddit", "express"],
        "configs": [{"config_name": "default",
                     "data_files": [{"split": s, "path": f"data/{s}-*.parquet"} for s in files]}],
    }
    if generated["license"] != "other":
        generated.pop("license_name")
    readme = card.readme
    old_data: dict[str, Any] = {}
    old_text = ""
    if readme.exists():
        with open(readme, encoding="utf-8", newline="") as fh:  # as DatasetCard.load reads it
            text = fh.read()
        if text.lstrip().startswith("---"):  # a card: its metadata block, then its text
            old = DatasetCard(text)
            old_data, old_text = old.data.to_dict(), old.text
        else:  # a README without card metadata (a withdrawal notice, a hand-written page): its text
            old_text = text
    data = merge_metadata(old_data, generated)
    report = str(card.report.relative_to(card.root)) if linked_report else None
    body = _merge_body(old_text, _body(manifest, stats, data, report) + _review_section(review))
    hub_card = DatasetCard.from_template(DatasetCardData(**data), template_str="---\n{{ card_data }}\n---\n\n" + body)
    hub_card.save(readme)
    description = cfg.get("description") or f"EXPRESS-style emotion self-disclosure benchmark {manifest['dataset']}"
    croissant = write_croissant(card, manifest=manifest, files=files, description=description,
                                license_name=str(data.get("license_name") or data.get("license")),
                                url=url or f"https://huggingface.co/datasets/{manifest['dataset']}")
    return {"readme": readme, "croissant": croissant, **{s: out_dir / r for s, r in files.items()}}


def merge_metadata(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Existing YAML keys survive; list keys are unioned; user-owned keys keep the existing value."""
    merged = dict(old)
    for key, value in new.items():
        if key in USER_WINS and old.get(key):
            continue
        if key in UNION_KEYS and isinstance(old.get(key), list):
            merged[key] = list(dict.fromkeys([*old[key], *value]))
        else:
            merged[key] = value
    return merged


def _merge_body(old_text: str, generated: str) -> str:
    block = f"{BEGIN}\n{generated.strip()}\n{END}"
    if BEGIN in old_text and END in old_text:
        before, rest = old_text.split(BEGIN, 1)
        after = rest.split(END, 1)[1]
        return f"{before}{block}{after}".strip() + "\n"
    return (old_text.strip() + "\n\n" + block + "\n") if old_text.strip() else block + "\n"


def _body(m: dict[str, Any], stats: Any, data: dict[str, Any], report: str | None = None) -> str:
    f = m.get("funnel") or {}
    dropped = f.get("dropped", {})
    top = stats.labels.most_common(20)
    total = sum(stats.labels.values()) or 1
    label_rows = "\n".join(f"| {w} | {n} | {n / total:.1%} |" for w, n in top)
    split_rows = "\n".join(f"| {s} | {n} |" for s, n in stats.rows.items())
    drop_rows = "\n".join(f"| {k} | {v} |" for k, v in sorted(dropped.items()))
    seg = m.get("segmentation") or {}
    gate = m.get("gate") or {}
    report_line = (f"\nThe [data-quality report]({report}) shows this release on one page: how it compares with "
                   "its parent release and with EXPRESS, examples of its labels, what privacy scrubbing replaced, "
                   "and the quality gate.\n" if report else "")
    return f"""# {data.get('pretty_name', m['dataset'])}

Masked first-person emotion disclosures from Reddit ("I feel so <mask>"), built with `express`
release {m['dataset']}/{m['version']} (parent {m.get('parent_version') or 'none'}, code {m.get('code_version')}).
Each row has the original segment `text`, the `masked_text` where each self-disclosed emotion word is
replaced by `<mask>`, the masked words in mask order (`surfaces`, the paper's labels) and their
canonical emotion labels (`labels`, vocabulary {m.get('vocabulary_version') or 'unversioned'}).
{report_line}
## Curation
Posts were read from Reddit dumps, filtered (deleted/removed, NSFW, bots, length bounds,
duplicates), and searched with the three EXPRESS first-person pattern families; negated
disclosures are not used as labels. Posts longer than {seg.get('max_tokens', 512)} tokens are cut into windows
around groups of masks, clipped to sentence ends (tokenizer `{seg.get('tokenizer', 'n/a')}`).
Splits are deterministic by a hash of the post id (mode `{m.get('split_mode', 'hash')}`), so all segments
of a post are in one split.

| split | rows |
|---|---|
{split_rows}

## Funnel
Read {f.get('read', 'n/a')} posts = kept {f.get('kept', 'n/a')} + dropped {sum(dropped.values()) if dropped else 0}
+ malformed {f.get('malformed', 'n/a')}.

| dropped because | posts |
|---|---|
{drop_rows}

## Label distribution
{len(stats.labels)} distinct labels over {total} masks. Top 20:

| label | masks | share |
|---|---|---|
{label_rows}

## Quality gate
Great Expectations suites {', '.join(f"{s['name']} v{s['version']}" for s in gate.get('suites', []))}:
{'passed' if gate.get('success') else 'not run'}; largest label share {gate.get('max_label_share', 'n/a')},
label JS divergence vs parent {gate.get('label_js_divergence')}.

## Personal information (PII)
{pii_statement(m)}

## Reddit terms of use
The texts are Reddit user content, subject to Reddit's User Agreement and Data API Terms.
Use them for research, do not try to identify or contact the authors, and remove posts that
were deleted upstream when you refresh the data.

## Known biases
Reddit users skew young, English-speaking, North American and male; the subreddits sampled
shape the emotions seen. First-person pattern matching favours explicit, frequent emotion
words and misses implicit or figurative expression; labels are the writers' own words, not
annotations.

## Licences
The lexicon of emotion words is the EXPRESS lexicon (Shu et al., 2026; Apache-2.0). The
10-dimensional decomposition used for AccV/F1V derives from the NRC Emotion Lexicon (Saif M.
Mohammad and Peter D. Turney), which is free for research use only; check its terms before
any commercial use. Code: Apache-2.0.
"""


def _review_section(review: dict[str, Any] | None) -> str:
    """The hand-review paragraph, present only when masks of this release were reviewed."""
    if not review:
        return ""
    o = review["overall"]
    rows = "\n".join(f"| {name} | {p['reviewed']} | {p['precision']:.3f} | [{p['low']:.3f}, {p['high']:.3f}] |"
                     for name, p in review["by_pattern"].items())
    return f"""
## Hand review
{o['reviewed']} masks of this release were reviewed by hand ({len(review['reviewers'])} reviewer(s), review
ledger v{review['ledger_version']}): reviewed precision {o['precision']:.3f}, Wilson 95 % interval
[{o['low']:.3f}, {o['high']:.3f}] ({o['accepted']} accepted, {o['rejected']} rejected).

| pattern | reviewed | precision | 95 % interval |
|---|---|---|---|
{rows}
"""
