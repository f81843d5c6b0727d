from pathlib import Path

import pytest

from common.checksums import sha256_file
from schemas.config import ConfigError, load_recipe, recipe_from_dict
from schemas.lexicon import (
    DATA_DIR,
    DIMS,
    ZERO,
    data_versions,
    default_decomposition,
    lexicon_terms,
    load_decomposition,
)

REPO = Path(__file__).resolve().parents[2]


def test_each_shipped_data_file_matches_its_declared_checksum():
    for name, entry in data_versions().items():
        assert sha256_file(DATA_DIR / entry["file"]) == entry["sha256"], f"{name}: bump its version"


def test_lexicon_has_the_684_express_strings():
    terms = lexicon_terms()
    assert len(terms) == 684
    assert {"guilty", "scared", "worri", "self-conscious"} <= terms


def test_decomposition_gives_ten_dims_and_zero_for_unknown_words():
    dec = default_decomposition()
    assert len(dec.vectors) == 16019
    assert dec.vector("HAPPY") == dec.vector("happy") != ZERO
    assert len(dec.vector("happy")) == len(DIMS) == 10
    assert dec.vector("no-such-word") == ZERO


def test_bad_decomposition_row_names_file_and_line(tmp_path):
    bad = tmp_path / "dec.csv"
    bad.write_text("word," + ",".join(DIMS) + "\nhappy," + ",".join(["0"] * 10) + "\nsad,x" + ",0" * 9 + "\n")
    with pytest.raises(ValueError, match=r"dec.csv:3"):
        load_decomposition(bad)


def test_bad_decomposition_row_names_its_start_line_after_a_multi_line_field(tmp_path):
    bad = tmp_path / "dec.csv"
    zeros = ",".join(["0"] * 10)
    # lines: 1 header, 2-3 a word quoted over two lines, 4 happy, 5-6 the bad row (its word spans two lines too)
    bad.write_text(f'word,{",".join(DIMS)}\n"broken\nhearted",{zeros}\nhappy,{zeros}\n"sad\nday",x{",0" * 9}\n',
                   newline="")
    with pytest.raises(ValueError, match=r"dec\.csv:5: "):
        load_decomposition(bad)


def test_recipes_in_configs_validate():
    recipes = {path.name: load_recipe(path) for path in sorted((REPO / "configs").glob("*.toml"))}
    assert set(recipes) == {"demo.toml", "dumps.toml", "express.toml"}  # the three the README names
    assert all(r.source_path.endswith(name) for name, r in recipes.items())
    assert recipes["express.toml"].sources.kind == "praw" and recipes["demo.toml"].dataset.name == "express-demo"


def test_unknown_config_key_is_an_error_naming_it():
    with pytest.raises(ConfigError, match="bogus"):
        recipe_from_dict({"filters": {"bogus": 1}})
    with pytest.raises(ConfigError, match="must be 1.0"):
        recipe_from_dict({"splits": {"train": 0.9, "validation": 0.2, "test": 0.1}})
