"""The one place that talks to Great Expectations (1.x, ephemeral context).

The rest of the code hands in named pandas tables and suite dicts (from schemas/expectations/)
and gets back plain JSON: GX's own validation results plus a short list of failures.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import pandas as pd


def _context(docs_dir: Path | None) -> Any:
    import great_expectations as gx
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
    tables: dict[str, pd.DataFrame],
    suites: list[dict[str, Any]],
    parameters: dict[str, Any],
    examples_per_failure: int = 5,
    docs_dir: Path | None = None,
) -> dict[str, Any]:
    """Run each suite on its table; returns {success, suites: [{name, version, gx}], failures: [...]}."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    import great_expectations as gx
    from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

    ctx = _context(docs_dir)
    source = ctx.data_sources.add_pandas("express")
    base_format = {"result_format": "SUMMARY", "partial_unexpected_count": max(1, examples_per_failure)}
    out: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    for suite_data in suites:
        table = suite_data["table"]
        if table not in tables:
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
        batch = {"dataframe": tables[table]}
        if docs_dir is None:
            res = vd.run(batch_parameters=batch, expectation_parameters=parameters,
                         result_format=result_format).to_json_dict()
        else:  # one run through a Checkpoint validates and renders Data Docs (not a second pass)
            res = _run_with_docs(ctx, vd, suite_data["name"], batch, parameters, result_format)
        out.append({"name": suite_data["name"], "version": suite_data["version"], "table": table,
                    "sha256": suite_data.get("sha256"), "gx": res})
        for r in res["results"]:
            if not r["success"]:
                failures.append(_failure(suite_data["name"], r, examples_per_failure))
    return {"success": not failures, "suites": out, "failures": failures}


def _run_with_docs(ctx: Any, vd: Any, name: str, batch: dict[str, Any], parameters: dict[str, Any],
                   result_format: dict[str, Any]) -> dict[str, Any]:
    """Validate through a Checkpoint whose action renders GX Data Docs (static HTML); returns the
    validation result as `ValidationDefinition.run` would."""
    import great_expectations as gx

    cp = ctx.checkpoints.add(gx.Checkpoint(
        name=f"docs-{name}", validation_definitions=[vd],
        actions=[gx.checkpoint.UpdateDataDocsAction(name="docs", site_names=["express"])],
        result_format=result_format))
    result = cp.run(batch_parameters=batch, expectation_parameters=parameters)
    (validation,) = result.run_results.values()
    return validation.to_json_dict()


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
