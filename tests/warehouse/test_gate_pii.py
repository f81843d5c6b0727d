"""The gate checks what the scrubber promises, with the scrubber's own detectors: a release with
PII planted is refused through publish_release, a scrubbed one passes, and kinds the recipe
does not scrub are not held against it."""
import json
from dataclasses import replace

import pytest

from common.parquet import ParquetSink
from privacy.scrubber import cached_scrubber
from schemas.config import Recipe
from schemas.expectations import pii_check
from schemas.records import EXAMPLES, Example
from warehouse.gate.pii import GatePii
from warehouse.layout import Warehouse
from warehouse.releases.publish import GateFailed, publish_release

PLANTED = {  # one leak of each kind, as a writer would leave it
    "email": "mail me at jane.doe@gmail.com tonight",
    "url": "my blog is johnsmith.ai now",
    "ip": "he logged in from 73.12.201.5 again",
    "phone": "call +44 20 7946 0958 after work",
    "card": "he used 4111 1111 1111 1111 online",
    "ssn": "my SSN 219-09-9999 leaked",
    "iban": "pay DE89 3704 0044 0532 0130 00 back",
    "user": "thanks u/Kind_Stranger for the advice",
    "address": "we moved to 12 Elm Street, Leeds in May",
    "dob": "I was born on 3 March 1991 and still",
    "id": "my passport number 538104772 was stolen",
    "name": "my husband Mike (31M) forgot again",
}


def _ex(pid: str, tail: str) -> Example:
    text = f"Today I feel sad, {tail}."
    return Example(pid, 0, "sub", 0, text, text.replace("I feel sad", "I feel <mask>", 1), ["sad"], ["sad"], ["family1"])


def _write(path, examples):
    with ParquetSink(path, EXAMPLES) as sink:
        for e in examples:
            sink.write(e.to_row())
    return path


def _clean(n=30):
    return [_ex(f"c{i}", "and nothing else happened at 9:30 in r/relationships") for i in range(n)]


def test_a_release_with_planted_pii_of_each_kind_is_refused_and_nothing_is_published(tmp_path):
    planted = [_ex(f"leak-{kind}", tail) for kind, tail in PLANTED.items()]
    wh = Warehouse.at(tmp_path / "wh")
    recipe = replace(Recipe(), gate=replace(Recipe().gate, examples_per_failure=len(PLANTED), data_docs=False))
    with pytest.raises(GateFailed) as err:
        publish_release(_write(tmp_path / "ex.parquet", _clean() + planted), wh, recipe, {"funnel": {}})
    assert "nothing published" in str(err.value) and wh.versions("express") == []
    results = json.loads((err.value.results_dir / "results.json").read_text())
    failures = {f["check"]: f for f in results["summary"]["failures"]}
    assert failures["no PII pattern left in text"]["unexpected_count"] == len(PLANTED)
    assert failures["no PII pattern left in masked_text"]["unexpected_count"] == len(PLANTED) - 1  # names: text only
    results_text = json.dumps(results)
    for found in ("EMAIL: jane.doe@gmail.com", "URL: johnsmith.ai", "IP: 73.12.201.5", "PHONE: +44 20 7946 0958",
                  "CARD: 4111 1111 1111 1111", "SSN: 219-09-9999", "IBAN: DE89 3704 0044 0532 0130 00",
                  "USER: u/Kind_Stranger", "ADDRESS: 12 Elm Street, Leeds", "DOB: 3 March 1991", "ID: 538104772",
                  "NAME: Mike"):
        assert found in results_text, found
    pii = results["summary"]["pii"]
    assert pii["rows_checked"] == 30 + len(PLANTED) and pii["rows_name_checked"] == 30 + len(PLANTED)


def test_a_release_built_from_scrubbed_texts_passes_and_records_the_check(tmp_path):
    from tests.filters.pii_table import load_table

    scrubbed = cached_scrubber().settled([text for text, _, _ in load_table()])
    examples = [_ex(f"s{i}", s.rstrip(".")) for i, s in enumerate(scrubbed)]
    recipe = replace(Recipe(), gate=replace(Recipe().gate, max_label_share=1.0, data_docs=False))  # all "sad"
    rel = publish_release(_write(tmp_path / "ex.parquet", examples), Warehouse.at(tmp_path / "wh"), recipe, {"funnel": {}})
    gate = rel.manifest()["gate"]
    assert gate["success"] and gate["pii"]["kinds"] == list(cached_scrubber().kinds)
    assert gate["pii"]["rows_checked"] == len(examples) and gate["pii"]["detectors"]["libraries"]["presidio-analyzer"]


def test_kinds_the_recipe_does_not_scrub_are_not_held_against_the_release(tmp_path):
    recipe = Recipe()
    recipe = replace(recipe, privacy=replace(recipe.privacy, scrub_urls=False, scrub_names=False),
                     gate=replace(recipe.gate, data_docs=False))
    files = _write(tmp_path / "ex.parquet", _clean() + [_ex("u1", PLANTED["url"]), _ex("n1", PLANTED["name"])])
    rel = publish_release(files, Warehouse.at(tmp_path / "wh"), recipe, {"funnel": {}})
    assert rel.manifest()["gate"]["pii"]["kinds"] == ["email", "ip", "phone", "card", "ssn", "iban", "user", "address",
                                                      "dob", "id"]


def test_names_are_checked_on_a_bounded_deterministic_sample_of_rows(tmp_path):
    import pyarrow as pa

    files = {"test": _write(tmp_path / "ex.parquet", _clean(400))}
    spec = {**pii_check(), "names_sample_rows": 40}
    table = pa.Table.from_pylist([{"post_id": f"c{i}", "segment_index": 0, "text": "Mike said hi", "masked_text": "x"}
                                  for i in range(400)])
    first, second = GatePii(spec, None, files), GatePii(spec, None, files)
    a, b = first.columns(table), second.columns(table)
    assert 20 <= first.name_rows <= 60 and first.name_rows == second.name_rows
    assert sum(f is not None for f in a["pii_in_text"]) == first.name_rows  # exactly the sampled rows were name-checked
    assert a["pii_in_text"] == b["pii_in_text"]


def _gate_columns(files, prescans=(), kinds=None):
    """The pii_in_* columns the gate computes over `files`, and its PII description."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    pii = GatePii(pii_check(), kinds, files, prescans)
    found = pii.columns(pa.concat_tables([pq.read_table(p) for p in files.values()]))
    return pd.DataFrame(found), pii.describe()


def _texts(examples):
    return [t for e in examples for t in (e.text, e.masked_text)]


def test_a_prescan_of_the_same_detectors_gives_the_gate_exactly_what_its_own_scan_finds(tmp_path):
    from warehouse.gate.pii import prescan

    examples = _clean(20) + [_ex(f"leak-{kind}", tail) for kind, tail in PLANTED.items()]
    files = {"train": _write(tmp_path / "ex.parquet", examples)}
    scanned, plain = _gate_columns(files)
    assert prescan(_texts(examples), tmp_path / "scan.parquet", cached_scrubber().kinds) == len(set(_texts(examples)))
    looked_up, described = _gate_columns(files, [tmp_path / "scan.parquet"])
    assert looked_up.equals(scanned) and scanned["pii_in_masked_text"].notna().sum() == len(PLANTED) - 1
    assert plain["texts_from_prescan"] == 0 and described["texts_from_prescan"] == 2 * len(examples)


def test_the_gate_scans_itself_what_no_matching_prescan_saw(tmp_path):
    from warehouse.gate.pii import prescan

    leaks = [_ex(f"leak-{kind}", tail) for kind, tail in PLANTED.items()]
    files = {"train": _write(tmp_path / "ex.parquet", _clean(10) + leaks)}
    scanned, _ = _gate_columns(files)
    prescan(_texts(_clean(10)), tmp_path / "part.parquet", cached_scrubber().kinds)  # the leaks never prescanned
    prescan(_texts(leaks), tmp_path / "other.parquet", ("email",))  # other detectors: must not count
    (tmp_path / "torn.parquet").write_bytes(b"PAR1 not a parquet file")
    looked_up, described = _gate_columns(files, [tmp_path / n for n in ("part.parquet", "other.parquet", "torn.parquet")])
    assert looked_up.equals(scanned) and scanned["pii_in_text"].notna().sum() == len(PLANTED)
    assert described["texts_from_prescan"] == 2 * 10
