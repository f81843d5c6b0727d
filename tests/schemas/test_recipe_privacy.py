"""The privacy switches are the recipe's [privacy] section; a recipe that still has them under
[filters] (their old place) is read as before, with one line on stderr per key saying where it
belongs now."""
from __future__ import annotations

import tomllib
from dataclasses import fields
from pathlib import Path

import pytest

from schemas.config import ConfigError, FilterConfig, PrivacyConfig, Recipe, load_recipe, upgraded


def _recipe(tmp_path, text: str):
    path = tmp_path / "recipe.toml"
    path.write_text(text)
    return path


def test_the_privacy_switches_are_their_own_section_and_no_longer_filters():
    switches = {f.name for f in fields(PrivacyConfig)}
    assert len(switches) == 13 and all(name.startswith("scrub_") for name in switches)
    assert not switches & {f.name for f in fields(FilterConfig)}
    assert set(Recipe().to_dict()["privacy"]) == switches


def test_an_old_key_under_filters_is_read_with_one_line_saying_where_it_belongs(tmp_path, capsys):
    path = _recipe(tmp_path, "[filters]\nmin_words = 3\nscrub_names = false\nscrub_urls = false\n")
    recipe = load_recipe(path)
    assert (recipe.privacy.scrub_names, recipe.privacy.scrub_urls, recipe.privacy.scrub_pii) == (False, False, True)
    assert recipe.filters.min_words == 3
    assert recipe.to_dict() == load_recipe(_recipe(tmp_path, "[filters]\nmin_words = 3\n[privacy]\nscrub_names = false\n"
                                                             "scrub_urls = false\n")).to_dict()
    assert capsys.readouterr().err.splitlines() == [
        f"{path}: [filters] scrub_names belongs in [privacy] now; read as [privacy] scrub_names",
        f"{path}: [filters] scrub_urls belongs in [privacy] now; read as [privacy] scrub_urls"]
    load_recipe(path)  # a build loads its recipe more than once: the notes are said once
    assert capsys.readouterr().err == ""


def test_a_key_at_its_old_and_its_new_place_is_refused(tmp_path):
    path = _recipe(tmp_path, "[filters]\nscrub_names = false\n[privacy]\nscrub_names = true\n")
    with pytest.raises(ConfigError, match=r"scrub_names is given in \[filters\] \(its old place\) and in \[privacy\]"):
        load_recipe(path)


def test_the_shipped_recipes_have_every_key_in_its_place(capsys):
    for name in ("demo", "dumps", "express"):
        load_recipe(f"configs/{name}.toml")
        assert upgraded(tomllib.loads(Path(f"configs/{name}.toml").read_text()), name)[1] == []
    assert capsys.readouterr().err == ""
