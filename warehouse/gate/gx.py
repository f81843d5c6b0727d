"""The one place that talks to Great Expectations (1.x, ephemeral context).

The rest of the code hands in named pandas tables and suite dicts (from schemas/expectations/)
and gets back plain JSON: GX's own validation results plus a short list of failures.
"""
from __future__ import annotations

import json
import logging
import os
import re
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd


def import_gx() -> Any:
    """Great Expectations, imported here rather than at module level (it is heavy; most commands
    never validate). Analytics stay off: nothing reaches out at run time."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import great_expectations as gx

    return gx


def _quiet_gx() -> None:
    """GX sets some of its module loggers to INFO on import; keep their chatter out of the terminal."""
    for name in ["great_expectations", *logging.root.manager.loggerDict]:
        if name.startswith("great_expectations"):
            logging.getLogger(name).setLevel(logging.ERROR)


def _context(docs_dir: Path | None) -> Any:
    gx = import_gx()
    from great_expectations.data_context.types.base import ProgressBarsConfig

    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False)
    if docs_dir is not None:
        ctx.add_data_docs_site(site_name="express", site_config={
            "class_name": "SiteBuilder",
            "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(docs_dir)},
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
        })
    return ctx


def validate_tables(
    chunks: Callable[[str], Iterable[pd.DataFrame]],
    table_names: set[str],
    suites: list[dict[str, Any]],
    parameters: dict[str, Any],
    examples_per_failure: int = 5,
    docs_dir: Path | None = None,
) -> dict[str, Any]:
    """Run each suite on its table, given as one or more DataFrame chunks (`chunks(name)`); chunk
    results are merged per expectation. Returns {success, suites: [{name, version, gx}], failures}."""
    gx = import_gx()
    from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

    _quiet_gx()

    ctx = _context(docs_dir)
    source = ctx.data_sources.add_pandas("express")
    base_format = {"result_format": "SUMMARY", "partial_unexpected_count": max(1, examples_per_failure)}
    out: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    for suite_data in suites:
        table = suite_data["table"]
        if table not in table_names:
            raise KeyError(f"suite {suite_data['name']} checks table '{table}', which the gate did not compute")
        batch_def = source.add_dataframe_asset(f"{suite_data['name']}-{table}").add_batch_definition_whole_dataframe("all")
        expectations = [
            ExpectationConfiguration(type=e["type"], kwargs=e["kwargs"], meta=e.get("meta", {})).to_domain_obj()
            for e in suite_data["expectations"]
        ]
        suite = ctx.suites.add(gx.ExpectationSuite(name=suite_data["name"], expectations=expectations,
                                                   meta={"version": suite_data["version"]}))
        vd = ctx.validation_definitions.add(gx.ValidationDefinition(name=suite_data["name"], data=batch_def, suite=suite))
        result_format = dict(base_format)
        if suite_data.get("id_columns"):  # failing rows are reported with their ids
            result_format["unexpected_index_column_names"] = list(suite_data["id_columns"])
        parts = [vd.run(batch_parameters={"dataframe": frame}, expectation_parameters=parameters,
                        result_format=result_format).to_json_dict() for frame in chunks(table)]
        res = merge_results(parts, examples_per_failure)
        out.append({"name": suite_data["name"], "version": suite_data["version"], "table": table,
                    "sha256": suite_data.get("sha256"), "gx": res})
        for r in res["results"]:
            if not r["success"]:
                failures.append(_failure(suite_data["name"], r, examples_per_failure))
    if docs_dir is not None:  # rendered once from the stored results of every chunk (no second validation)
        ctx.build_data_docs(site_names=["express"])
        make_docs_offline(docs_dir)
    return {"success": not failures, "suites": out, "failures": failures}


def merge_results(parts: list[dict[str, Any]], n: int) -> dict[str, Any]:
    """One suite result from the results of its chunks, as if GX had seen the whole table: counts
    summed, percentages recomputed, up to `n` examples kept per expectation."""
    if len(parts) == 1:
        return parts[0]
    merged = dict(parts[0])
    merged["results"] = [_merge_expectation([p["results"][i] for p in parts], n) for i in range(len(parts[0]["results"]))]
    ok = sum(1 for r in merged["results"] if r["success"])
    total = len(merged["results"])
    merged["success"] = ok == total
    merged["statistics"] = {**parts[0].get("statistics", {}), "evaluated_expectations": total,
                            "successful_expectations": ok, "unsuccessful_expectations": total - ok,
                            "success_percent": 100.0 * ok / total if total else None}
    merged["meta"] = {**(parts[0].get("meta") or {}), "chunks": len(parts)}
    return merged


_SUMMED = ("element_count", "missing_count", "unexpected_count")
_LISTS = ("partial_unexpected_list", "partial_unexpected_index_list")


def _merge_expectation(rs: list[dict[str, Any]], n: int) -> dict[str, Any]:
    out = dict(rs[0])
    out["success"] = all(r["success"] for r in rs)
    raised = next((r["exception_info"] for r in rs if (r.get("exception_info") or {}).get("raised_exception")), None)
    if raised is not None:
        out["exception_info"] = raised
    results = [r.get("result") or {} for r in rs]
    res = dict(results[0])
    for key in _SUMMED:
        if any(key in r for r in results):
            res[key] = sum(r.get(key) or 0 for r in results)
    for key in _LISTS:
        if any(key in r for r in results):
            res[key] = [x for r in results for x in (r.get(key) or [])][:max(n, 1)]
    res.pop("partial_unexpected_counts", None)  # per-chunk tallies do not add up to the table's
    if "element_count" in res and "unexpected_count" in res:
        elements, missing, bad = res["element_count"], res.get("missing_count") or 0, res["unexpected_count"]
        res["unexpected_percent_total"] = 100.0 * bad / elements if elements else 0.0
        res["unexpected_percent"] = res["unexpected_percent_nonmissing"] = (
            100.0 * bad / (elements - missing) if elements - missing else 0.0)
        if "missing_percent" in res:
            res["missing_percent"] = 100.0 * missing / elements if elements else 0.0
    if res.get("observed_value") is None:
        res["observed_value"] = next((r.get("observed_value") for r in results if r.get("observed_value") is not None),
                                     res.get("observed_value"))
    out["result"] = res
    return out


def _failure(suite: str, r: dict[str, Any], n: int) -> dict[str, Any]:
    cfg = r["expectation_config"]
    kwargs = {k: v for k, v in cfg["kwargs"].items() if k not in ("batch_id", "value_set", "regex_list")}
    res = r.get("result") or {}
    exc = r.get("exception_info") or {}
    return {
        "suite": suite,
        "expectation": cfg["type"],
        "check": (cfg.get("meta") or {}).get("check", cfg["type"]),
        "kwargs": kwargs,
        "rows": res.get("element_count"),
        "unexpected_count": res.get("unexpected_count"),
        "unexpected_percent": res.get("unexpected_percent"),
        "observed_value": res.get("observed_value"),
        "examples": _plain((res.get("partial_unexpected_index_list") or res.get("partial_unexpected_list") or [])[:n]),
        "exception": exc.get("exception_message") if exc.get("raised_exception") else None,
    }


def _plain(value: Any, limit: int = 160) -> Any:
    """JSON-safe copy of GX example values (numpy scalars to Python, long texts shortened)."""
    if isinstance(value, dict):
        return {str(k): _plain(v, limit) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, limit) for v in value]
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + "..."
    if hasattr(value, "item") and not isinstance(value, (bytes, bytearray)):
        try:
            return value.item()
        except (TypeError, ValueError):
            pass
    return value if isinstance(value, (int, float, bool, type(None))) else str(value)


VENDOR = Path(__file__).resolve().parents[1] / "data" / "docs_vendor"
_EXTERNAL_LOAD = re.compile(r"<(?:script|link|img)\b[^>]*?\b(?:src|href)=[\"'](https?://[^\"']+)", re.IGNORECASE)
_LOCAL_TAG = re.compile(r"<(?:script|link)\b[^>]*>", re.IGNORECASE)
_SRI = re.compile(r"\s(?:integrity|crossorigin)(?:=(?:\"[^\"]*\"|'[^']*'|[^\s>]+))?", re.IGNORECASE)
_STATIC_LINK = re.compile(r"\b(src|href)=\"(?:\./|(?:\.\./)*)static/([^\"?#]+)\"")
_GX_LOGO = re.compile(r"https://great-expectations-web-assets\.s3\.[\w.-]+\.amazonaws\.com/(logo-long\.png)(?:\?[^\"']*)?")


def make_docs_offline(docs_dir: Path) -> dict[str, Any]:
    """Point the Data Docs at assets shipped with them: GX's pages load Bootstrap, jQuery,
    bootstrap-table, Font Awesome and Vega from CDNs and render blank offline. The npm files of
    data/docs_vendor/ go to static/vendor/ (with their licences); every page is rewritten to them.
    What is left pointing outside is listed in OFFLINE.json (a test keeps it empty)."""
    docs_dir = Path(docs_dir)
    spec = json.loads((VENDOR / "assets.json").read_text())
    target = docs_dir / "static" / "vendor"
    shutil.copytree(VENDOR / "files", target, dirs_exist_ok=True)
    shutil.copyfile(VENDOR / "assets.json", target / "assets.json")
    urls = sorted(((a["url"], a["file"]) for a in spec["assets"]), key=lambda u: -len(u[0]))
    rewritten, leftover = set(), set()
    for page in docs_dir.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        up = os.path.relpath(docs_dir / "static", page.parent).replace(os.sep, "/")
        for url, local in urls:
            if url in html:
                rewritten.add(url)
                html = re.sub(re.escape(url) + r"(?![\w.@/-])", f"{up}/vendor/{local}", html)
        html = _GX_LOGO.sub(lambda m: f"{up}/images/{m.group(1)}", html)
        # GX writes static/ links one level short on validation pages (a missing favicon)
        html = _STATIC_LINK.sub(lambda m: f'{m.group(1)}="{up}/{m.group(2)}"'
                                if (docs_dir / "static" / m.group(2)).is_file() else m.group(0), html)
        # a CDN tag's integrity/crossorigin make a file:// page refuse the local copy (CORS)
        html = _LOCAL_TAG.sub(lambda m: _SRI.sub("", m.group(0)) if "/vendor/" in m.group(0) else m.group(0), html)
        leftover.update(_EXTERNAL_LOAD.findall(html))
        page.write_text(html, encoding="utf-8")
    report = {"rewritten": sorted(rewritten), "leftover": sorted(leftover)}
    (docs_dir / "OFFLINE.json").write_text(json.dumps(report, indent=1) + "\n")
    return report
