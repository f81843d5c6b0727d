"""When is a Prefect API configured (flows/prefect_api.py, docs/runtime.md): PREFECT_API_URL, a
recipe's [orchestrate] prefect_api_url where the environment names none, or Prefect's own
settings, which are read (importing Prefect) only when one of its settings files exists."""
from __future__ import annotations

import os

import pytest

from flows import prefect_api
from schemas.config import ConfigError, load_recipe
from tests.fresh_python import environ_without, fresh_python


def test_a_recipes_prefect_api_is_the_commands_where_the_environment_names_none_and_is_never_recorded(
        tmp_path, monkeypatch):
    recipe_file = tmp_path / "recipe.toml"
    recipe_file.write_text('[orchestrate]\nprefect_api_url = "http://127.0.0.1:4200/api"\n')
    recipe = load_recipe(recipe_file)
    assert "prefect_api_url" not in recipe.to_dict()["orchestrate"]  # not in a run id, a run or a manifest
    monkeypatch.setenv("PREFECT_API_URL", "http://10.0.0.5:4200/api")
    prefect_api.from_recipe(recipe.orchestrate.prefect_api_url)
    assert os.environ["PREFECT_API_URL"] == "http://10.0.0.5:4200/api"  # the environment wins
    monkeypatch.delenv("PREFECT_API_URL")
    prefect_api.from_recipe(recipe.orchestrate.prefect_api_url)
    assert os.environ["PREFECT_API_URL"] == "http://127.0.0.1:4200/api" and prefect_api.configured()


def test_a_recipes_prefect_api_that_is_no_url_is_refused_naming_the_key(tmp_path):
    recipe_file = tmp_path / "recipe.toml"
    recipe_file.write_text('[orchestrate]\nprefect_api_url = "127.0.0.1:4200"\n')
    with pytest.raises(ConfigError, match=r"recipe.toml \[orchestrate\]: prefect_api_url must be an http"):
        load_recipe(recipe_file)


PROFILES = """
import sys
from pathlib import Path
from flows.prefect_api import configured
first = configured()
loaded = "prefect" in sys.modules
Path(sys.argv[1], "profiles.toml").write_text('active = "mine"\\n[profiles.mine]\\n'
                                               'PREFECT_API_URL = "http://127.0.0.1:4200/api"\\n')
print(first, loaded, configured())
"""


def test_prefect_is_asked_only_once_a_profile_exists_and_then_its_api_counts(tmp_path):
    home = tmp_path / "prefect-home"
    home.mkdir()
    out = fresh_python(PROFILES, str(home), env=environ_without("PREFECT_", "EXPRESS_", PREFECT_HOME=str(home)))
    assert out.split() == ["False", "False", "True"]
