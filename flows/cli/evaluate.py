"""Evaluation commands: score, evaluate, sweep, leaderboard, compare, agreement, eval-report.

Option precedence for `evaluate`: command-line flags, then the recipe's [evaluate] section
(`--config`), then the defaults; the API key only ever comes from the environment.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields
from typing import Any

from common.errors import USER_ERROR, InputError
from flows import prefect_api
from flows.cli.core import force_arg, refuse_withdrawn_release, warehouse_arg
from flows.cli.errors import recipe_number, whole_number
from flows.reported import reported
from schemas.config import EvaluateConfig, LiveFields

# The fields the run reads itself; every other [evaluate] field is a predictor option. The window,
# cutoff and probe fields (LiveFields) are the run's too: they travel as `run["live"]`.
LIVE_FIELDS = tuple(f.name for f in fields(LiveFields))
RUN_FIELDS = ("split", "predictor", "setting", "model", "bootstrap", *LIVE_FIELDS)


def help_names() -> dict[str, str]:
    """What help texts list: our predictors (the registry), the shipped prompt settings and variants."""
    from evaluation.predictors.prompts import load_prompts
    from evaluation.predictors.registry import BUILTIN

    prompts = load_prompts()
    return {"predictors": ", ".join(BUILTIN), "settings": ", ".join(prompts.settings),
            "variants": ", ".join(prompts.variants)}


class NamesHelpFormatter(argparse.HelpFormatter):
    """Fills {predictors}, {settings} and {variants} in when help is shown, so building the parser
    imports neither the registry nor the prompts file."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        if text and "{" in text:
            text = text.format(**help_names())
        return text


def add_option_flags(p: argparse.ArgumentParser, sweep: bool = False) -> None:
    """One flag per field of the recipe's [evaluate] section (schemas/config.py), with its help text.
    Flags default to None, so a recipe's value shows through when a flag is not given."""
    # the run's own first, then its window, cutoff and probe, then the predictor's options
    for f in sorted(fields(EvaluateConfig), key=lambda f: (f.name not in RUN_FIELDS, f.name in LIVE_FIELDS)):
        if sweep and not f.metadata["sweep"]:
            continue
        flag = f.metadata["flag"] or "--" + f.name.replace("_", "-")
        where = f" ([evaluate] {f.name}; default {f.default!r})"
        if isinstance(f.default, bool):
            p.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction, help=f.metadata["help"] + where)
        else:
            kind = recipe_number("evaluate", f.name) if isinstance(f.default, (int, float)) else type(f.default)
            p.add_argument(flag, dest=f.name, type=kind, help=f.metadata["help"] + where)


def _decomposition(path: str | None) -> Any:
    from schemas.lexicon import default_decomposition, load_decomposition

    return load_decomposition(path) if path else default_decomposition()


@reported("express-score")
def cmd_score(args: argparse.Namespace) -> int:
    from evaluation.scoring.score_file import score_file

    result = score_file(args.predictions, _decomposition(args.lexicon), args.labels_field, args.output_field)
    print(json.dumps(result))
    return 0


def evaluate_options(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """(run settings, predictor options) from the flags, else the recipe's [evaluate]; no key in either.
    The window, cutoff and probe fields are checked here, so a bad one stops the command before any work.
    The recipe's Prefect API, if it names one, is the command's."""
    from evaluation.predictors.answers import check_mode
    from schemas.config import check_live, load_recipe

    recipe = load_recipe(args.config)
    prefect_api.from_recipe(recipe.orchestrate.prefect_api_url)
    cfg = recipe.evaluate
    given = {f.name: getattr(args, f.name, None) for f in fields(cfg)}
    values = {k: getattr(cfg, k) if v is None else v for k, v in given.items()}
    run = {k: values.pop(k) for k in RUN_FIELDS}
    run["live"] = {k: run.pop(k) for k in LIVE_FIELDS}
    flags = {f.name: f.metadata["flag"] or "--" + f.name.replace("_", "-") for f in fields(cfg)}
    check_live(LiveFields(**run["live"]),
               lambda key: flags[key] if given[key] is not None else f"{recipe.source_path} [evaluate] {key}")
    check_mode(values["answers"])
    if run["live"]["sample"] and getattr(args, "limit", None) is not None:
        where = "--sample" if given["sample"] is not None else f"{recipe.source_path} [evaluate] sample"
        raise ValueError(f"{where} draws rows across the window and --limit takes the first ones: give one of them")
    if run["split"] == "train":
        raise ValueError("predictors are fitted on the train split; evaluate on validation or test")
    return run, values


def eval_request(run: dict[str, Any], options: dict[str, Any], limit: int | None) -> dict[str, Any]:
    """The flows' request (`EvalRequest.params()`) from `evaluate_options`' two halves."""
    from evaluation.predictors.base import PredictorOptions
    from evaluation.run import EvalRequest

    opts = PredictorOptions(**{**options, "setting": run["setting"], "model": run["model"]})
    return EvalRequest(run["predictor"], run["split"], opts, LiveFields(**run["live"]), limit, run["bootstrap"]).params()


def check_choice(predictor: str, settings: list[str], options: dict[str, Any]) -> bool:
    """Fail before any work on an unknown predictor, prompt setting or variant, or an embedding
    model that cannot be loaded. True when the predictor takes prompts."""
    from evaluation.predictors.fewshot import check_embedding_backend
    from evaluation.predictors.prompts import DEFAULT_VARIANT, load_prompts
    from evaluation.predictors.registry import predictor_class, uses_prompts

    if not uses_prompts(predictor_class(predictor)):
        return False
    prompts = load_prompts(options.get("prompts_file") or None)
    for setting in settings:
        for variant in options.get("prompt_variants") or [options.get("prompt_variant") or DEFAULT_VARIANT]:
            if prompts.get(setting, variant).selection == "nearest":
                check_embedding_backend(options.get("embedding_model", ""))
    return True


def check_live_run(args: argparse.Namespace, run: dict[str, Any]) -> None:
    """Before any work or request: a probe the predictor can run, a cutoffs file that loads, and a
    window that holds rows of the split."""
    from evaluation.live.cutoffs import resolve_cutoff
    from evaluation.live.probe import check_probe
    from evaluation.live.window import Window, check_window
    from warehouse.layout import Warehouse
    from warehouse.releases.release import Release

    live = run["live"]
    check_probe(run["predictor"], live["probe"])
    resolve_cutoff(run["model"], live["cutoff"], live["cutoffs_file"])
    window = Window.parse(live["posted_after"], live["posted_before"])
    release = Release.find(Warehouse.at(args.warehouse), args.release)
    if not window.everything and run["split"] in release.split_files():
        check_window(release.split_file(run["split"]), window, f"{release.release_id} {run['split']}")


def _usage_error(command: str, exc: Exception) -> int:
    print(f"express {command}: {exc.args[0] if exc.args else exc}", file=sys.stderr)
    return USER_ERROR


def cmd_evaluate(args: argparse.Namespace) -> int:
    from evaluation.predictors.fewshot import EmbeddingBackendError
    from warehouse.layout import Warehouse

    try:
        run, options = evaluate_options(args)
        check_choice(run["predictor"], [run["setting"]], options)
        check_live_run(args, run)
    except (ValueError, KeyError, EmbeddingBackendError) as exc:
        return _usage_error("evaluate", exc)
    refuse_withdrawn_release(args, "evaluate")
    from evaluation.commands import evaluate

    # a failure is one line (flows/cli: user errors exit 2); the run folder, if any, is marked failed
    out = reported("express-evaluate")(evaluate)(str(Warehouse.at(args.warehouse).root), args.release,
                                                 eval_request(run, options, args.limit), not args.no_report)
    print(json.dumps({"run_id": out["run_id"], "path": out["path"], **out["metrics"],
                      **({"window": out["window"]} if out.get("window") else {}),
                      **({"report": out["report"]} if out.get("report") else {})}))
    if out["metrics"]["VRate"] < HINT_BELOW:
        print(f"express evaluate: hint: {vrate_hint(out['path'], out['metrics']['VRate'], options['answers'])}",
              file=sys.stderr)
    return 0


HINT_BELOW = 0.5  # VRate under which `express evaluate` says why answers were invalid


def vrate_hint(run_path: str, vrate: float, answers: str) -> str:
    """One line: how many answers parsed, the commonest invalid shape with an example, what to try."""
    from pathlib import Path

    from warehouse.layout import EvaluationPaths

    shapes = json.loads(EvaluationPaths(Path(run_path)).analysis.read_text()).get("invalid_shapes") or []
    top = shapes[0] if shapes else None
    seen = f"; commonest: {top['shape']} ({top['rows']} rows, e.g. {top['examples'][0]!r})" if top and top["examples"] else ""
    remedy = ("drop --answers free to ask for exactly as many words as masks" if answers == "free" else
              "the model ignored the structured format; try a larger model or another server")
    return f"only {vrate:.0%} of answers were lists of as many words as masks{seen}; {remedy} (run report: Invalid answers)"


@reported("express-export-lm-eval")
def cmd_export_lm_eval(args: argparse.Namespace) -> int:
    from evaluation.outputs.lm_eval_export import export_lm_eval
    from warehouse.layout import Warehouse

    try:
        done = export_lm_eval(Warehouse.at(args.warehouse), args.release, args.out, args.prompts, args.force)
    except (ValueError, FileNotFoundError, FileExistsError, KeyError) as exc:
        return _usage_error("export lm-eval", exc)
    print(json.dumps({"task": done.task, "path": str(done.path), "rows": done.rows}))
    print(f"run: lm_eval --include_path {done.path} --tasks {done.task} --model ... --apply_chat_template",
          file=sys.stderr)
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from evaluation.predictors.fewshot import EmbeddingBackendError
    from evaluation.predictors.prompts import DEFAULT_VARIANT
    from evaluation.outputs.sweep import cell_row, format_sweep, grid, parse_list, parse_temperatures
    from warehouse.layout import Warehouse

    try:
        run, options = evaluate_options(args)
        settings = parse_list(args.settings, "--settings")
        variants = parse_list(args.prompt_variants or DEFAULT_VARIANT, "--prompt-variants")
        cells = grid(settings, parse_temperatures(args.temperatures), variants)
        if not check_choice(run["predictor"], settings, {**options, "prompt_variants": variants}):
            raise ValueError(f"predictor '{run['predictor']}' takes no prompts: settings, variants and temperatures "
                             f"do not change it (use `express evaluate`)")
        check_live_run(args, run)
    except (ValueError, KeyError, EmbeddingBackendError) as exc:
        return _usage_error("sweep", exc)
    refuse_withdrawn_release(args, "sweep")
    from evaluation.commands import sweep

    # a failure is one line (flows/cli: user errors exit 2); finished cells stay stored
    runs = reported("express-sweep")(sweep)(str(Warehouse.at(args.warehouse).root), args.release,
                                            eval_request(run, options, args.limit), [vars(c) for c in cells])
    print(format_sweep([cell_row(r["cell"], r["path"]) for r in runs], args.format))
    return 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from evaluation.outputs.board import board_rows, format_board
    from evaluation.outputs.runs import leaderboard
    from warehouse.layout import Warehouse

    from evaluation.live.window import Window
    from schemas.config import check_live

    # dates that parse, in range, not backwards: as `evaluate` checks them
    check_live(LiveFields(posted_after=args.posted_after or "", posted_before=args.posted_before or ""),
               lambda key: "--" + key.replace("_", "-"))
    window = Window.parse(args.posted_after or "", args.posted_before or "")
    runs = leaderboard(Warehouse.at(args.warehouse), args.release, args.split, latest_only=not args.all,
                       hide_withdrawn=args.hide_withdrawn)
    rows = board_rows(runs, window)  # each run on the rows of the window it answered, from its stored answers
    if not rows:
        raise InputError("no complete runs" + ("" if window.everything else
                                               f" within the window {window.label}: none answered a row posted in it")
                         + " (run `express evaluate` first)")
    print(format_board(rows, args.format))
    return 0


@reported("express-site")
def cmd_site(args: argparse.Namespace) -> int:
    from evaluation.outputs.site import write_site
    from pipeline.release_docs import write_report
    from warehouse.layout import SitePaths, Warehouse

    wh = Warehouse.at(args.warehouse)
    report = None if args.no_reports else (lambda release, path: write_report(wh, release, path))
    done = write_site(wh, args.out, report)
    print(f"{len(done.pages)} pages for {len(done.releases)} release(s) in {done.root}; open "
          f"{SitePaths(done.root).index}, or publish the folder (docs/live.md)")
    return 0


@reported("express-compare")
def cmd_compare(args: argparse.Namespace) -> int:
    from evaluation.outputs.compare import compare_runs, format_comparison
    from evaluation.outputs.runs import find_run
    from warehouse.layout import Warehouse

    wh = Warehouse.at(args.warehouse)
    result = compare_runs(find_run(wh, args.run_a), find_run(wh, args.run_b), _decomposition(args.lexicon), wh)
    print(json.dumps(result, indent=2) if args.json else format_comparison(result))
    return 0


@reported("express-agreement")
def cmd_agreement(args: argparse.Namespace) -> int:
    from evaluation.scoring.agreement import agreement

    result = agreement(args.files)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"raters: {len(result['raters'])}  items: {result['items']}  categories: {result['categories']}")
    for p in result["pairs"]:
        kappa = "-" if p["cohen_kappa"] is None else f"{p['cohen_kappa']:.4f}"
        print(f"Cohen's kappa  {p['a']} vs {p['b']}: {kappa}  ({p['items']} items)")
    fleiss = "-" if result["fleiss_kappa"] is None else f"{result['fleiss_kappa']:.4f}"
    print(f"Fleiss' kappa: {fleiss}  ({result['fleiss_items']} items rated by all)")
    print(f"Krippendorff's alpha (nominal): {result['krippendorff_alpha']:.4f}  ({result['krippendorff_units']} units)")
    return 0


@reported("express-eval-report")
def cmd_report(args: argparse.Namespace) -> int:
    from evaluation.outputs.report import write_report
    from evaluation.run_numbers import derive_numbers
    from evaluation.outputs.runs import find_run
    from warehouse.layout import Warehouse

    run = find_run(Warehouse.at(args.warehouse), args.run)
    derive_numbers(run.path)  # from the rows the run holds now, as a fresh or rescored run is
    print(write_report(run.path))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("score", help="EXPRESS metrics for a predictions file (JSONL or CSV)")
    p.add_argument("--predictions", required=True)
    p.add_argument("--lexicon", help="decomposition CSV (default: the shipped one)")
    p.add_argument("--labels-field", help="field of the gold words (default: surfaces, else labels)")
    p.add_argument("--output-field", default="output", help="field holding the raw model answer")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("evaluate", help="score a predictor on a published release and store the run",
                       formatter_class=NamesHelpFormatter)
    p.add_argument("--release", required=True, help="VERSION or DATASET/VERSION")
    p.add_argument("--limit", type=whole_number(1), help="score the first N rows of the split (in time order; "
                                                          "--sample N draws them across it)")
    p.add_argument("--config", help="recipe TOML whose [evaluate] section gives defaults")
    p.add_argument("--no-report", action="store_true", help="do not write the Markdown report")
    add_option_flags(p)
    force_arg(p)
    warehouse_arg(p)
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("sweep", help="run a grid of settings x temperatures x prompt variants; one table with "
                                     "AccL/AccV/F1V and how concentrated the answers are",
                       formatter_class=NamesHelpFormatter)
    p.add_argument("--release", required=True, help="VERSION or DATASET/VERSION")
    p.add_argument("--settings", required=True, help="comma-separated prompt settings: {settings}")
    p.add_argument("--temperatures", default="0", help="comma-separated sampling temperatures (default 0)")
    p.add_argument("--prompt-variants", help="comma-separated prompt variants (default: default): {variants}")
    p.add_argument("--limit", type=whole_number(1), help="score the first N rows of the split (in time order; "
                                                          "--sample N draws them across it)")
    p.add_argument("--config", help="recipe TOML whose [evaluate] section gives defaults")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    add_option_flags(p, sweep=True)
    force_arg(p)
    warehouse_arg(p)
    p.set_defaults(func=cmd_sweep, setting=None)

    p = sub.add_parser("export", help="a release in another harness's format")
    formats = p.add_subparsers(dest="format", required=True)
    e = formats.add_parser("lm-eval", help="an lm-evaluation-harness task folder (lm_eval --include_path DIR)")
    e.add_argument("--release", required=True, help="VERSION or DATASET/VERSION")
    e.add_argument("--out", required=True, help="a new or empty folder")
    e.add_argument("--prompts", help="prompts TOML whose zero-shot prompt is used (default: the shipped one)")
    force_arg(e)
    warehouse_arg(e)
    e.set_defaults(func=cmd_export_lm_eval)

    p = sub.add_parser("leaderboard", help="table of stored runs (AccL AccV F1V VRate EWRate, intervals, cutoffs), "
                                           "like the paper's Table 3")
    p.add_argument("--release", help="only runs on this release (DATASET/VERSION or VERSION)")
    p.add_argument("--split")
    p.add_argument("--all", action="store_true", help="every run, not just the latest per predictor/setting/model/window")
    p.add_argument("--posted-after", help="score each run on the rows it answered posted at or after DATE (UTC)")
    p.add_argument("--posted-before", help="score each run on the rows it answered posted before DATE (UTC)")
    p.add_argument("--hide-withdrawn", action="store_true", help="leave out runs on a withdrawn release")
    p.add_argument("--format", choices=("text", "markdown", "json", "csv"), default="text")
    warehouse_arg(p)
    p.set_defaults(func=cmd_leaderboard)

    p = sub.add_parser("site", help="the benchmark as a static site (leaderboards per release and month, charts "
                                    "with each model's cutoff, per-word scores, reports): docs/live.md")
    p.add_argument("--out", required=True, help="folder to write the site into (e.g. the gh-pages checkout)")
    p.add_argument("--no-reports", action="store_true", help="leave out the releases' data-quality reports")
    warehouse_arg(p)
    p.set_defaults(func=cmd_site)

    p = sub.add_parser("compare", help="differences between two runs with paired significance tests")
    p.add_argument("run_a")
    p.add_argument("run_b")
    p.add_argument("--json", action="store_true")
    p.add_argument("--lexicon", help="decomposition CSV (default: the shipped one)")
    warehouse_arg(p)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("agreement", help="Cohen's, Fleiss' kappa and Krippendorff's alpha; one rater per file")
    p.add_argument("files", nargs="+", help="CSV/JSONL with id,label, or .txt with one label per line")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_agreement)

    p = sub.add_parser("eval-report", help="derive a run's numbers again from its stored rows and (re)write its "
                                          "Markdown report with charts")
    p.add_argument("run", help="run id, unique prefix, or run folder")
    warehouse_arg(p)
    p.set_defaults(func=cmd_report)
