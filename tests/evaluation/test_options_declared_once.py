"""Evaluation options are declared once (schemas/config.py): the recipe key, the CLI flags of
`express evaluate` / `express sweep` and the PredictorOptions field all come from one field."""
import json
from dataclasses import fields

from evaluation.predictors.base import PredictorOptions
from evaluation.predictors.prompts import load_prompts
from evaluation.predictors.registry import BUILTIN
from flows.cli import parser
from schemas.config import EvaluateConfig, PredictorFields
from tests.fresh_python import fresh_python

# The one edit a newcomer makes (docs/extending.md, "A new option"), applied to a copy of the
# module's source in a fresh interpreter; the rest of the code is as it is.
ONE_EDIT = """
import pathlib, sys, types
src = pathlib.Path("schemas/config.py").read_text().splitlines(keepends=True)
at = next(i for i, line in enumerate(src) if line.startswith("class PredictorFields"))
at = next(i for i in range(at, len(src)) if " = option(" in src[i])
src.insert(at, '    beam_width: int = option(1, "beams kept per decoding step (probe)", bounds=(1, None))\\n')
module = types.ModuleType("schemas.config")
module.__file__ = "schemas/config.py"
sys.modules["schemas.config"] = module
exec(compile("".join(src), "schemas/config.py", "exec"), module.__dict__)

class Probe:
    def __init__(self, options):
        self.options = options
    def predict(self, item):
        return repr(["sad"] * item.n_masks)
    def describe(self):
        return {"beam_width": self.options.beam_width}

probe = types.ModuleType("probe")
probe.Probe = Probe
sys.modules["probe"] = probe

from flows.cli import parser
from flows.cli.evaluate import evaluate_options
from evaluation.predictors.base import PredictorOptions
from evaluation.run import EvalRequest, evaluate_release
from warehouse.layout import Warehouse

warehouse, release, recipe = sys.argv[1:4]
sub = parser()._subparsers._group_actions[0].choices
args = parser().parse_args(["evaluate", "--release", release, "--predictor", "probe:Probe", "--beam-width", "7",
                            "--config", recipe, "--warehouse", warehouse])
run, options = evaluate_options(args)
from_recipe = evaluate_options(parser().parse_args(["evaluate", "--release", release, "--config", recipe]))[1]
out = evaluate_release(Warehouse.at(warehouse), release, EvalRequest(
    run["predictor"], run["split"], PredictorOptions(**options, setting=run["setting"], model=run["model"]), limit=3))
import json
config = json.loads((out.path / "config.json").read_text())
print(json.dumps({"evaluate_help": sub["evaluate"].format_help(), "sweep_help": sub["sweep"].format_help(),
                  "details": config["predictor_details"], "stored": config["options"].get("beam_width"),
                  "from_recipe": from_recipe["beam_width"], "vrate": out.metrics["VRate"]}))
"""


def test_a_new_option_field_becomes_a_recipe_key_and_flags_and_reaches_the_predictor(tiny_release, tmp_path):
    recipe = tmp_path / "recipe.toml"
    recipe.write_text("[evaluate]\nbeam_width = 3\n")
    out = json.loads(fresh_python(ONE_EDIT, tiny_release["warehouse"], tiny_release["release"], str(recipe)))
    assert "--beam-width" in out["evaluate_help"] and "beams kept per decoding step" in out["evaluate_help"]
    assert "--beam-width" in out["sweep_help"]
    assert out["details"] == {"beam_width": 7} and out["stored"] == 7  # the flag beat the recipe's 3
    assert out["from_recipe"] == 3 and out["vrate"] == 1.0


def test_every_option_field_is_a_flag_and_a_predictor_option():
    sub = parser()._subparsers._group_actions[0].choices
    evaluate = {a.dest for a in sub["evaluate"]._actions}
    sweep = {a.dest for a in sub["sweep"]._actions}
    for f in fields(EvaluateConfig):
        assert f.name in evaluate, f.name
        assert (f.name in sweep) == f.metadata["sweep"], f.name
    assert {f.name for f in fields(PredictorFields)} < {f.name for f in fields(PredictorOptions)}


def test_help_lists_the_registrys_predictors_and_the_prompts_files_settings_and_variants(monkeypatch):
    monkeypatch.setenv("COLUMNS", "2000")  # no line breaks inside hyphenated names
    sub = parser()._subparsers._group_actions[0].choices
    text = " ".join(sub["evaluate"].format_help().split())
    sweep = " ".join(sub["sweep"].format_help().split())
    prompts = load_prompts()
    for name in [*BUILTIN, *prompts.settings, *prompts.variants]:
        assert name in text, name
    for name in [*prompts.settings, *prompts.variants]:
        assert name in sweep, name
