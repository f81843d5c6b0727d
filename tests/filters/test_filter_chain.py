"""The filter chain is an ordered list in the recipe (`[filters] chain`), built name by name through
one registry (filters/chain.py); its default is the order the house rule asks for: cheapest and most
selective first, the disclosure prefilter right after the field checks, duplicates last."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from filters.chain import DISCLOSURE, FILTERS, filters_from_config
from schemas.config import FILTER_CHAIN, ConfigError, FilterConfig, load_recipe
from schemas.records import RawPost


@dataclass
class Marker:
    """Stands for the build's disclosure prefilter."""

    name: str = "marker"

    def check(self, post: RawPost) -> str | None:
        return None


def names(cfg: FilterConfig) -> list[str]:
    return [f.name for f in filters_from_config(cfg, selective=[Marker()])]


def _recipe(tmp_path, text: str):
    path = tmp_path / "recipe.toml"
    path.write_text(text)
    return path


def test_every_name_the_recipe_knows_has_a_builder_and_every_builder_a_place_in_the_default_chain():
    assert set(FILTERS) | {DISCLOSURE} == set(FILTER_CHAIN) and DISCLOSURE not in FILTERS


def test_a_recipe_without_a_chain_runs_the_filters_in_the_default_order():
    assert names(load_recipe("configs/dumps.toml").filters) == [
        "deleted", "nsfw", "bot", "distinguished", "crosspost", "length", "marker", "language", "duplicate",
        "near_duplicate"]
    # a filter whose settings ask nothing is left out (the demo recipe: no language, no near duplicates)
    assert names(load_recipe("configs/demo.toml").filters) == [
        "deleted", "nsfw", "bot", "distinguished", "crosspost", "length", "marker", "duplicate"]


def test_the_recipes_list_says_which_filters_run_and_in_what_order(tmp_path):
    path = _recipe(tmp_path, '[filters]\nmin_words = 5\nchain = ["bot", "disclosure", "length", "deleted"]\n')
    assert names(load_recipe(path).filters) == ["bot", "marker", "length", "deleted"]


@pytest.mark.parametrize(("chain", "said"), [
    ('["deleted", "lenght", "disclosure"]', "unknown filter 'lenght' (did you mean 'length'? known: deleted, nsfw,"),
    ('["deleted", "disclosure", "deleted"]', "'deleted' is named twice"),
    ('["deleted", "length"]', "'disclosure' (the prefilter) must be in the chain"),
    ('["duplicate", "disclosure", "length"]', "duplicate and near_duplicate come last, in that order"),
    ('["disclosure", "near_duplicate", "duplicate"]', "duplicate and near_duplicate come last, in that order"),
], ids=["unknown", "twice", "no-prefilter", "duplicate-first", "near-before-exact"])
def test_a_bad_chain_is_refused_naming_the_file_and_key(tmp_path, chain, said):
    path = _recipe(tmp_path, f"[filters]\nchain = {chain}\n")
    with pytest.raises(ConfigError) as err:
        load_recipe(path)
    assert str(err.value).startswith(f"{path} [filters].chain: {said}"), str(err.value)
