"""`express site`: the warehouse's benchmark as a static site a researcher puts on GitHub Pages. Per
release, a leaderboard per window (every row, then each month of posting) with the intervals, each
model's knowledge cutoff and its after-cutoff scores; a chart of each model's scores per month with
its cutoff marked; its scores per gold word; links to each run's report and to the release's
data-quality report. Withdrawn releases are marked. Every page holds its styles, charts and images
itself: viewing it asks nothing of the network.

The numbers are the leaderboard's (evaluation/outputs/board.py), read from the stored answers; each
leaderboard is also in its page as JSON (`<script type="application/json" class="board-data">`), the
rows `express leaderboard --format json` prints for the same release and window.
"""
from __future__ import annotations

import base64
import calendar
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from common.files import write_atomic
from evaluation.live.window import Window
from evaluation.outputs.board import SHOWN, BoardRow, board_rows, breakdown
from evaluation.outputs.runs import StoredRun, leaderboard
from evaluation.scoring.slices import METRICS
from warehouse.layout import EvaluationPaths, SitePaths, Warehouse
from warehouse.ledgers.exports import record_export
from warehouse.ledgers.withdrawn import describe, withdrawal
from warehouse.pages.charts import PALETTE, month_lines
from warehouse.pages.format import Markup, details, tag, text
from warehouse.releases.integrity import read_manifest
from warehouse.releases.release import Release
from warehouse.releases.stats import rows_by_month

ReportWriter = Callable[[str, Path], Path]  # (release id, where) -> the data-quality report it wrote there
TOP_LABELS = 12  # gold words shown per model (commonest first)
CSS = """body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1180px;padding:1.2em;color:#1d2330}
h1{font-size:1.6em;margin:.2em 0}h2{margin-top:1.6em;border-bottom:1px solid #dde;padding-bottom:.2em}
table{border-collapse:collapse;margin:.6em 0;font-size:13px}th,td{padding:.25em .55em;border-bottom:1px solid #e3e6ea}
th{text-align:left;background:#f4f6f9}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.withdrawn{background:#fdecec;border:1px solid #e5a0a0;padding:.5em .8em;border-radius:4px}
.muted{color:#667}svg.chart{max-width:100%;height:auto}details{margin:.3em 0}a{color:#2456a4}"""


@dataclass
class SiteWritten:
    """What `write_site` wrote, page by page."""

    root: Path
    pages: list[Path] = field(default_factory=list)
    releases: list[str] = field(default_factory=list)


def _page(title: str, body: list[str]) -> bytes:
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{text(title)}</title><style>{CSS}</style></head><body>{''.join(body)}</body></html>\n").encode()


def _num(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _with_interval(scores: dict[str, Any] | None, metric: str) -> Markup:
    value = (scores or {}).get(metric)
    lo_hi = ((scores or {}).get("intervals") or {}).get(metric)
    shown = text(_num(value))
    return Markup(shown + (tag("span", text(f" ({lo_hi[0]:.3f}-{lo_hi[1]:.3f})"), cls="muted") if lo_hi else ""))


BOARD_HEAD = ("predictor", "setting", "model", "split", "rows", *METRICS, "EWRate", "cutoff", "after rows",
              "after AccL", "after F1V", "window", "notes", "run")
NUMERIC = tuple(range(4, 15))


def board_table(rows: list[BoardRow], run_href: Callable[[str], str]) -> Markup:
    """A leaderboard as a table (AccL and F1V with their intervals), and the same rows as JSON."""
    body = []
    for b in rows:
        j, s, after = b.to_json(), b.scores, b.scores["after_cutoff"]
        cells = [text(j["predictor"]), text(j["setting"]), text(j["model"]), text(j["split"]), text(str(s["rows"])),
                 *(_with_interval(s, m) if m in SHOWN else text(_num(s[m])) for m in METRICS), text(_num(s["EWRate"])),
                 text(j["cutoff"] or "-"), text("-" if after is None else str(after["rows"])),
                 _with_interval(after, "AccL"), _with_interval(after, "F1V"), text(j["window"]), text(j["notes"]),
                 tag("a", text(j["run"]), href=run_href(j["run"]))]
        body.append(tag("tr", (tag("td", c, cls="n" if i in NUMERIC else None) for i, c in enumerate(cells)),
                        data_run=j["run"]))
    head = "".join(tag("th", text(h), cls="n" if i in NUMERIC else None) for i, h in enumerate(BOARD_HEAD))
    data = json.dumps([b.to_json() for b in rows]).replace("</", "<\\/")
    return Markup(tag("table", tag("thead", tag("tr", head)) + tag("tbody", body), cls="board")
                  + f'<script type="application/json" class="board-data">{data}</script>')


def cutoff_position(months: list[str], cutoff: str | None) -> float | None:
    """Where a cutoff date stands on an axis of months (month k spans k - 0.5 to k + 0.5), held to the
    axis's ends when it falls before or after them; None without a cutoff."""
    if not cutoff or not months:
        return None
    year, month, day = (int(x) for x in cutoff[:10].split("-"))
    key = f"{year:04d}-{month:02d}"
    if key < months[0]:
        return -0.5
    if key > months[-1]:
        return len(months) - 0.5
    k = months.index(key) if key in months else sum(m < key for m in months) - 0.5
    return k - 0.5 + (day - 1) / calendar.monthrange(year, month)[1]


def month_chart(runs: list[StoredRun], months: list[str]) -> Markup:
    """AccL per month of each run (its interval as a bar), its cutoff a dashed line in its colour."""
    series = []
    for k, run in enumerate(runs):
        by_month = breakdown(run)["months"] or {}
        values = [(by_month.get(m) or {}).get("AccL") for m in months]
        intervals = [((by_month.get(m) or {}).get("intervals") or {}).get("AccL") for m in months]
        name = f"{run.config.get('predictor')} {run.config.get('model') or ''}".strip()
        series.append((name, values, intervals, cutoff_position(months, (run.config.get("cutoff") or {}).get("cutoff")),
                       PALETTE[k % len(PALETTE)]))
    return month_lines(months, series, "AccL per month of posting (dashed: each model's knowledge cutoff)", "AccL")


def label_table(run: StoredRun) -> Markup:
    labels = (breakdown(run)["labels"] or [])[:TOP_LABELS]
    rows = [tag("tr", [tag("td", text(lab["gold"])), tag("td", text(str(lab["masks"])), cls="n"),
                       tag("td", text(_num(lab["AccL"])), cls="n"),
                       tag("td", text(", ".join(f"{w} ({n})" for w, n in lab["wrong"]) or "-"))]) for lab in labels]
    head = tag("tr", [tag("th", "gold word"), tag("th", "masks", cls="n"), tag("th", "AccL", cls="n"),
                      tag("th", "commonest wrong answers")])
    return tag("table", tag("thead", head) + tag("tbody", rows), cls="labels")


def windows(release: Release) -> list[tuple[str, Window]]:
    """Every row, then each month of posting the release holds."""
    found = [("all rows", Window())]
    for month in rows_by_month(release.split_files()):
        year, m = (int(x) for x in month.split("-"))
        after = f"{year + (m == 12):04d}-{m % 12 + 1:02d}-01"
        found.append((month, Window.parse(f"{month}-01", after)))
    return found


def release_page(wh: Warehouse, release: Release, site: SitePaths, with_report: bool) -> tuple[bytes, list[StoredRun]]:
    """A release's page and the runs it shows."""
    runs = leaderboard(wh, release.release_id)
    months = list(rows_by_month(release.split_files()))
    page = site.release_page(release.dataset, release.version)
    body = [tag("p", tag("a", "all releases", href=site.href(page, site.index))), tag("h1", text(release.release_id))]
    if (record := release.withdrawn) is not None:
        body.append(tag("p", text(f"Withdrawn: {describe(record)}. Its scores stay here for the record."),
                        cls="withdrawn"))
    if with_report:
        body.append(tag("p", tag("a", "data-quality report",
                                 href=site.href(page, site.release_report(release.dataset, release.version)))))
    shown: dict[str, StoredRun] = {}
    for label, window in windows(release):
        rows = board_rows(runs, window)
        section = [tag("h2", text(f"Leaderboard: {label}"), id=f"window-{re.sub(r'[^0-9a-z]+', '-', label)}")]
        if not rows:
            section.append(tag("p", text("No run answered a row posted in this window."), cls="muted"))
        else:
            section.append(board_table(rows, lambda run: site.href(page, site.run_page(run))))
            shown |= {b.run.run_id: b.run for b in rows}
        body += section
    with_months = [r for r in shown.values() if breakdown(r)["months"]]
    if with_months and months:
        body += [tag("h2", "Per month of posting", id="months"), month_chart(with_months, months),
                 tag("p", text("Each point: the model's AccL on the rows posted that month, with its bootstrap 95 % "
                               "interval. A dashed line marks the model's knowledge cutoff: rows to its right were "
                               "posted after the model's training data ends."), cls="muted")]
    body.append(tag("h2", "Per gold word", id="labels"))
    for run in shown.values():
        if breakdown(run)["labels"]:
            body.append(details(f"{run.config.get('predictor')} {run.config.get('model') or ''} ({run.run_id})",
                                label_table(run)))
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body.append(tag("p", text(f"Written by express site on {generated} from the stored answers."), cls="muted"))
    return _page(f"{release.release_id}: leaderboard", body), list(shown.values())


def run_page(run: StoredRun, site: SitePaths) -> bytes:
    """A run's report (report.md) as a page, its charts inlined."""
    from markdown_it import MarkdownIt

    paths = EvaluationPaths(run.path)
    md = paths.report.read_text(encoding="utf-8") if paths.report.exists() else f"# {run.run_id}\n\nNo report was written."
    body = MarkdownIt("commonmark").enable("table").render(md)

    def inline(m: re.Match[str]) -> str:
        image = paths.report_dir / m.group(1)
        if not image.is_file():
            return m.group(0)
        return f'src="data:image/png;base64,{base64.b64encode(image.read_bytes()).decode()}"'

    body = re.sub(r'src="([^"/:]+\.png)"', inline, body)
    home = site.href(site.run_page(run.run_id), site.index)
    return _page(f"{run.run_id}: evaluation report", [tag("p", tag("a", "all releases", href=home)), body])


def index_page(entries: list[tuple[str, dict[str, Any], dict[str, Any] | None, bool]], site: SitePaths) -> bytes:
    rows = []
    for release_id, manifest, record, shown in entries:
        dataset, version = release_id.split("/", 1)
        status = text(describe(record)) if record else text("published")
        links = [tag("a", "leaderboard", href=site.href(site.index, site.release_page(dataset, version)))] if shown else []
        if shown and (site.release_report(dataset, version)).exists():
            links += [text(" · "), tag("a", "data-quality report",
                                       href=site.href(site.index, site.release_report(dataset, version)))]
        rows.append(tag("tr", [tag("td", text(release_id)), tag("td", text(manifest.get("created", ""))),
                               tag("td", text(str(sum((manifest.get("rows") or {}).values()))), cls="n"),
                               tag("td", status, cls="withdrawn" if record else None), tag("td", "".join(links))]))
    head = tag("tr", [tag("th", h) for h in ("release", "published", "rows", "status", "pages")])
    return _page("express benchmark", [tag("h1", "express benchmark"),
                                       tag("p", text("EXPRESS-style emotion self-disclosure benchmarks, and the models "
                                                     "scored on them.")),
                                       tag("table", tag("thead", head) + tag("tbody", rows), cls="releases")])


def write_site(wh: Warehouse, out: str | Path, report: ReportWriter | None = None) -> SiteWritten:
    """Write the site into `out` (recorded as a copy outside the warehouse: a takedown names it);
    `report` writes a release's data-quality report where the site links it."""
    site = SitePaths(Path(out))
    done = SiteWritten(site.root)
    entries, runs = [], {}
    for paths in wh.releases():
        record = withdrawal(paths.root)
        manifest = read_manifest(paths.root)
        release_id = f"{manifest['dataset']}/{manifest['version']}"
        if record is not None and record.get("purged"):
            entries.append((release_id, manifest, record, False))  # its rows are gone: listed, nothing to show
            continue
        release = Release.at(paths.root)
        if report is not None:
            done.pages.append(report(release_id, site.release_report(release.dataset, release.version)))
        page, shown = release_page(wh, release, site, report is not None)
        write_atomic(site.release_page(release.dataset, release.version), page)
        done.pages.append(site.release_page(release.dataset, release.version))
        runs |= {r.run_id: r for r in shown}
        entries.append((release_id, manifest, record, True))
        done.releases.append(release_id)
    for run_id, run in sorted(runs.items()):
        write_atomic(site.run_page(run_id), run_page(run, site))
        done.pages.append(site.run_page(run_id))
    write_atomic(site.index, index_page(entries, site))
    done.pages.append(site.index)
    record_export(wh, site.root, "site")
    return done
