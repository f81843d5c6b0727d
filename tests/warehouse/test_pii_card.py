"""The card and Croissant say what was scrubbed and how, from the release's own manifest."""
import json
from dataclasses import replace

import pytest

from common.parquet import ParquetSink
from schemas.config import Recipe
from schemas.records import EXAMPLES, Example
from warehouse.layout import CardPaths
from warehouse.pages.card import export_card
from warehouse.layout import Warehouse
from warehouse.pages.pii_statement import pii_statement
from warehouse.releases.publish import publish_release


def _release(tmp_path, recipe):
    path = tmp_path / "ex.parquet"
    with ParquetSink(path, EXAMPLES) as sink:
        for i in range(12):
            text = f"Today I feel sad about [NAME] and [URL], post {i}."
            sink.write(Example(f"p{i}", 0, "sub", 0, text, text.replace("sad", "<mask>", 1), ["sad"], ["sad"],
                               ["family1"]).to_row())
    return publish_release(path, Warehouse.at(tmp_path / "wh"), recipe, {"funnel": {}})


def test_card_and_croissant_name_the_scrubbed_kinds_the_placeholders_and_the_gate_check(tmp_path):
    recipe = replace(Recipe(), gate=replace(Recipe().gate, data_docs=False))
    out = export_card(_release(tmp_path, recipe), CardPaths(tmp_path / "card"))
    readme = out["readme"].read_text(encoding="utf-8")
    section = readme.split("## Personal information (PII)")[1].split("##")[0]
    for said in ("Microsoft Presidio", "presidio-analyzer 2.2.364", "[EMAIL]", "[URL]", "[IP]", "[PHONE]", "[CARD]",
                 "[SSN]", "[IBAN]", "[USER]", "[ADDRESS]", "[DOB]", "[ID]", "[NAME]", "en_core_web_sm", "gazetteer", "re-ran the same detectors", "12 rows"):
        assert said in section, said
    croissant = json.loads(out["croissant"].read_text(encoding="utf-8"))
    assert croissant["rai:personalSensitiveInformation"] == section.strip()


@pytest.mark.parametrize("section", ["privacy", "filters"], ids=["privacy", "older-release"])
def test_a_kind_switched_off_is_not_claimed(section):
    """[privacy] of a release, or [filters] of a release older code published (the switches' old place)."""
    manifest = {"config": {section: {"scrub_urls": False, "scrub_names": False}}}
    said = pii_statement(manifest)
    assert "[URL]" not in said and "[NAME]" not in said and "[EMAIL]" in said and "were not scrubbed" in said
    assert "switched off" in pii_statement({"config": {section: {"scrub_pii": False}}})
