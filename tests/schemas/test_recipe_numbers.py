"""Every number in a recipe has its range and its kind (whole or not): a decimal for a whole
number, a negative count or ratio, a zero shard size are refused naming the file and key, before
anything runs; the command line's overrides are checked the same way."""
from __future__ import annotations

import argparse
import re
from dataclasses import fields

import pytest

from flows.cli.errors import recipe_number
from schemas.config import SECTIONS, ConfigError, Recipe, check_number, load_recipe, option


def _recipe(tmp_path, text: str):
    path = tmp_path / "recipe.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("text", "message"), [
    ("[filters]\nmin_words = 5.7\n", "[filters].min_words: expected an integer, got 5.7"),
    ("[filters]\nmax_words = -1\n", "[filters].max_words: must be at least 0, got -1"),
    ("[orchestrate]\nshard_lines = -100\n", "[orchestrate].shard_lines: must be at least 1, got -100"),
    ("[orchestrate]\nshard_lines = 0\n", "[orchestrate].shard_lines: must be at least 1, got 0"),
    ("[splits]\ntrain = 1.2\nvalidation = -0.1\ntest = -0.1\n", "[splits].train: must be from 0 to 1, got 1.2"),
    ("[splits]\ntrain = 0.9\nvalidation = -0.1\ntest = 0.2\n", "[splits].validation: must be from 0 to 1, got -0.1"),
    ("[evaluate]\ntemperature = -0.5\n", "[evaluate].temperature: must be from 0 to 2, got -0.5"),
    ("[gate]\nmax_label_share = 1.5\n", "[gate].max_label_share: must be from 0 to 1, got 1.5"),
    ("[splits]\ntrain = nan\nvalidation = 0.5\ntest = 0.5\n", "[splits].train: expected a finite number, got nan"),
    ("[evaluate]\ntimeout = inf\n", "[evaluate].timeout: expected a finite number, got inf"),
    ("[filters]\nmin_words = 99999999999999999999\n",
     "[filters].min_words: must be at most 9,223,372,036,854,775,807, got 99999999999999999999"),
    ("[filters]\nmin_words = 50\nmax_words = 10\n",
     "[filters]: min_words (50) is above max_words (10): every post would be dropped (max_words = 0 means no upper "
     "bound)"),
    ("[extract]\nmin_masks = 3\nmax_masks = 2\n",
     "[extract]: min_masks (3) is above max_masks (2): no post would give an example"),
    ("[gate]\nmin_text_chars = 500\nmax_text_chars = 400\n",
     "[gate]: min_text_chars (500) is above max_text_chars (400): every row would fail the gate"),
    ("[gate]\nmax_label_share = 0\n", "[gate]: max_label_share must be above 0: every label would fail the gate"),
    ("[segment]\nmax_tokens = 256\n", "[segment]: group_tokens (256) must be below max_tokens (256)"),
], ids=["decimal", "negative", "negative-shard", "zero-shard", "ratio-high", "ratio-negative", "temperature",
        "share", "nan-ratio", "inf-timeout", "huge-integer", "min-above-max", "masks-min-above-max",
        "text-chars-min-above-max", "zero-share", "group-not-below-max"])
def test_a_number_out_of_its_kind_or_range_is_refused_naming_the_file_and_key(tmp_path, text, message):
    path = _recipe(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_recipe(path)
    assert str(err.value) == f"{path} {message}"


def test_a_number_within_its_range_is_taken():
    assert load_recipe(None).orchestrate.shard_lines >= 1


def _numbers():
    return [(section, f) for section, cls in SECTIONS.items() for f in fields(cls)
            if isinstance(f.default, (int, float)) and not isinstance(f.default, bool)]


def test_every_key_of_every_section_is_declared_with_its_help_and_every_number_with_its_bounds():
    """A key is one `option(...)` (schemas/config.py): type, default, bounds and help together."""
    undeclared = [f"[{section}] {f.name}" for section, cls in SECTIONS.items() for f in fields(cls)
                  if not f.metadata.get("help")]
    assert not undeclared, undeclared
    unbounded = [f"[{section}] {f.name}" for section, f in _numbers() if f.metadata["bounds"] == (None, None)]
    assert not unbounded, unbounded
    with pytest.raises(TypeError, match="needs its bounds"):
        option(3, "a number without bounds")


def test_every_default_is_within_its_bounds():
    recipe = Recipe()
    for section, f in _numbers():
        low, high = f.metadata["bounds"]
        value = getattr(getattr(recipe, section), f.name)
        assert (low is None or value >= low) and (high is None or value <= high), (section, f.name, value)


def test_a_flag_that_overrides_a_number_key_is_checked_by_the_keys_own_declaration():
    """`express build --shard-lines`, `--workers` and every number flag of `express evaluate` refuse
    what the recipe key refuses, with the same words."""
    for section, f in _numbers():
        low = f.metadata["bounds"][0]
        if section not in ("orchestrate", "evaluate") or low is None:
            continue
        below = low - 1 if isinstance(f.default, int) else low - 0.0005
        with pytest.raises(ConfigError) as said:
            check_number(section, f.name, below, "")
        with pytest.raises(argparse.ArgumentTypeError, match=f"^{re.escape(str(said.value).lstrip(': '))}$"):
            recipe_number(section, f.name)(str(below))
        assert recipe_number(section, f.name)(str(f.default)) == f.default


@pytest.mark.parametrize(("recipe", "flags", "said"), [
    ("[filters]\nmin_words = 99999999999999999999\n", [], "min_words: must be at most 9,223,372,036,854,775,807"),
    ("[filters]\nmin_words = 50\nmax_words = 10\n", [], "min_words (50) is above max_words (10)"),
    ("[splits]\ntrain = nan\nvalidation = 0.5\ntest = 0.5\n", [], "[splits].train: expected a finite number"),
    ("", ["--shard-lines", "99999999999999999999"], "--shard-lines: must be at most 9,223,372,036,854,775,807"),
], ids=["huge-integer", "min-above-max", "nan-ratio", "huge-flag"])
def test_build_refuses_such_a_number_in_one_line_before_any_run_folder(tmp_path, capsys, recipe, flags, said):
    from flows.cli import main

    dump = tmp_path / "RS_2024-01.jsonl"
    dump.write_text('{"id": "a1", "title": "t", "selftext": "I feel so sad today.", "created_utc": 1704067200}\n')
    path = _recipe(tmp_path, recipe)
    try:
        code = main(["build", "--input", str(dump), "--config", str(path), "--warehouse", str(tmp_path / "wh"), *flags])
    except SystemExit as exc:  # a bad flag: argparse's exit
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "wh").exists()  # no run folder, no warehouse made
