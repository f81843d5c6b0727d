"""Sources and filters through the real build: `express build` on synthetic dumps (Prefect runs),
exact funnel accounting, PII never in a release, damaged dumps publish nothing, praw builds."""
import json
import random
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import zstandard

from common.errors import USER_ERROR
from flows.cli import main as express
from pipeline.split import InputFile, SplitStep
from pipeline.steps import run_step
from schemas.config import load_recipe, recipe_from_dict
from tests.fakes.reddit_server import FakeReddit

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)

REPO = Path(__file__).resolve().parents[2]
NOUNS = ["garden", "bicycle", "kitchen", "library", "harbour", "mountain", "violin", "notebook", "station",
         "bakery", "lighthouse", "meadow", "subway", "museum", "orchard", "balcony", "ferry", "attic"]
ADJS = ["quiet", "rusty", "crowded", "tiny", "foggy", "bright", "narrow", "ancient", "muddy", "cosy"]
VERBS = ["painted", "repaired", "visited", "cleaned", "photographed", "described", "measured", "sketched"]
EMOTIONS = ["guilty", "anxious", "lonely", "grateful", "scared", "hopeless", "proud", "nervous"]
PII = {
    "email": "write to jane.doe@example.com please",
    "url": "the thread is at https://www.reddit.com/r/advice/comments/abc123/help/ now",
    "user": "my friend u/Helpful_Person said so",
    "phone": "you can call me on 555-123-4567 tonight",
}
LEAKS = [re.compile(p) for p in (r"[\w.+-]+@[\w-]+\.[\w.]+", r"https?://|www\.", r"(?<!\w)/?u/\w",
                                 r"\d{3}[-.\s]\d{3}[-.\s]\d{4}", r"jane\.doe|Helpful_Person|abc123")]


def story(i: int, rng: random.Random) -> str:
    """An English post of ~40 words, different from every other (no shared sentences), with a disclosure."""
    sents = [f"Yesterday my cousin {rng.choice(VERBS)} the {rng.choice(ADJS)} {NOUNS[(i + k) % len(NOUNS)]} "
             f"number {i * 7 + k} with {k + 2} neighbours" for k in range(3)]
    sents.insert(1, f"I feel so {EMOTIONS[i % len(EMOTIONS)]} about it")
    return ". ".join(sents) + "."


def corpus() -> tuple[list[bytes], list[bytes], dict]:
    """RS lines, RC lines, and the ingest funnel they must produce."""
    rng = random.Random(7)
    sub = lambda i, **kw: {"id": f"s{i:03d}", "title": f"Week {i}", "selftext": story(i, rng), "subreddit": "offmychest",
                           "author": f"writer{i}", "created_utc": 1700000000 + i, "over_18": False, **kw}  # noqa: E731
    rs = [sub(i) for i in range(10)]
    for i, text in enumerate(PII.values()):
        rs[i]["selftext"] = rs[i]["selftext"] + " Also, " + text + "."
    rs += [
        sub(20, selftext="[deleted]", author="[deleted]"),
        sub(21, selftext="[removed]"),
        sub(22, removed_by_category="moderator"),
        sub(23, author="[deleted]"),
        sub(24, over_18=True),
        sub(25, subreddit="gonewild"),
        sub(26, author="AutoModerator"),
        sub(27, stickied=True, distinguished="moderator"),
        sub(28, crosspost_parent="t3_s001", crosspost_parent_list=[{"id": "s001"}]),
        sub(29, title="Short", selftext="I feel sad."),
        # French with an English disclosure: a candidate, so it reaches language ID
        sub(30, title="Semaine", selftext="Je me sens tellement coupable aujourd'hui, I feel so guilty, parce que "
            "j'ai oublié l'anniversaire de ma meilleure amie et elle ne répond plus à mes messages depuis trois jours."),
        {**rs[3], "id": "s031", "title": rs[3]["title"].upper(), "selftext": rs[3]["selftext"].upper()},
        {**rs[4], "id": "s032", "selftext": rs[4]["selftext"] + " Thanks for reading."},
    ]
    lines = [json.dumps(r).encode() for r in rs]
    lines.insert(5, b'{"id": "broken", "title": "cut')
    good = lines[8]
    lines.insert(9, good[:30] + b"\xff\xfe\x00\x13" + good[30:])  # a copy of line 9 with random bytes inside
    comment = lambda cid, link, body: json.dumps({"id": cid, "body": body, "link_id": link,  # noqa: E731
                                                  "author": "commenter", "subreddit": "offmychest",
                                                  "created_utc": 1700000500}).encode()
    rc = [comment("c1", "t3_s024", story(40, rng)), comment("c2", "t3_s005", story(41, rng)), b"not json"]
    expected = {"read": len(rs) + 2 + len(rc), "kept": 10 + 1, "malformed": 3, "dropped": {
        "deleted": 1, "removed": 2, "deleted_author": 1, "nsfw": 2, "nsfw_subreddit": 1, "bot": 1, "distinguished": 1,
        "crosspost": 1, "too_short": 1, "language": 1, "duplicate": 1, "near_duplicate": 1}}
    return lines, rc, expected


def write_inputs(tmp: Path) -> tuple[Path, Path, dict]:
    rs, rc, expected = corpus()
    rs_path, rc_path = tmp / "RS_2023-11.zst", tmp / "RC_2023-11.ndjson"
    rs_path.write_bytes(zstandard.ZstdCompressor().compress(b"\n".join(rs) + b"\n"))
    rc_path.write_bytes(b"\n".join(rc) + b"\n")
    return rs_path, rc_path, expected


def test_build_command_accounts_for_every_record_and_publishes_no_pii(prefect_harness, tmp_path, capsys):
    rs_path, rc_path, expected = write_inputs(tmp_path)
    warehouse = tmp_path / "wh"
    code = express(["build", "--input", str(rc_path), "--input", str(rs_path), "--warehouse", str(warehouse),
                    "--config", str(REPO / "configs" / "dumps.toml")])
    out = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and out[-1].endswith("manifest.json")
    manifest = json.loads(Path(out[-1]).read_text())
    ingest_funnel = manifest["stages"]["ingest"]
    assert ingest_funnel == {**expected, "dropped": dict(sorted(expected["dropped"].items()))}
    total, extract = manifest["funnel"], manifest["stages"]["extract"]
    assert extract["read"] == ingest_funnel["kept"] == extract["kept"] + sum(extract["dropped"].values())
    assert total["read"] == total["kept"] + sum(total["dropped"].values()) + total["malformed"] == expected["read"]
    assert total["kept"] == sum(manifest["rows"].values()) > 0
    assert {Path(i["path"]).name for i in manifest["inputs"]} == {rs_path.name, rc_path.name}
    assert all(len(i["sha256"]) == 64 for i in manifest["inputs"])
    assert set(manifest["filter_data_versions"]) == {"bot_authors", "nsfw_subreddits"}
    quarantine = pq.read_table(next(warehouse.glob("quarantine/*/ingest.parquet"))).to_pylist()
    reasons = [q["reason"].split(":")[0] for q in quarantine]
    assert len(quarantine) == expected["read"] - expected["kept"]
    assert sorted(reasons.count(r) for r in expected["dropped"]) == sorted(expected["dropped"].values())
    malformed = [q for q in quarantine if q["post_id"] is None]
    assert sorted((Path(q["source_file"]).name, q["source_line"]) for q in malformed) == [
        (rc_path.name, 3), (rs_path.name, 6), (rs_path.name, 10)]
    rows = [r for f in Path(manifest["path"] if "path" in manifest else Path(out[-1]).parent).glob("data/*.parquet")
            for r in pq.read_table(f).to_pylist()]
    assert rows and all("author" not in r for r in rows)
    published = " ".join(r["text"] + " " + r["masked_text"] for r in rows)
    assert not [p.pattern for p in LEAKS if p.search(published)]
    assert all(tag in published for tag in ("[EMAIL]", "[URL]", "[USER]", "[PHONE]"))
    assert "c2" in {r["post_id"] for r in rows} and "c1" not in {r["post_id"] for r in rows}


@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
def test_damaged_dump_publishes_nothing_and_says_where(prefect_harness, tmp_path, capsys, monkeypatch, damage):
    monkeypatch.setattr("sources.dumps.CHUNK", 4096)  # read in small pieces, as a multi-GB dump would be
    path = tmp_path / "RS_2023-12.zst"
    lines = [json.dumps({"id": f"p{i}", "title": "t", "selftext": f"I feel so tired {i} " * 8}).encode() for i in range(4000)]
    data = bytearray(zstandard.ZstdCompressor().compress(b"\n".join(lines) + b"\n"))
    if damage == "truncated":
        data = data[: len(data) * 2 // 3]
    else:
        for k in range(len(data) // 2, len(data) // 2 + 40):
            data[k] ^= 0xA5
    path.write_bytes(bytes(data))
    warehouse = tmp_path / "wh"
    code = express(["build", "--input", str(path), "--warehouse", str(warehouse)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert len(err) <= 3 and "Traceback" not in "\n".join(err)
    assert re.match(r"express build: nothing published: .*RS_2023-12\.zst.*byte \d+.*\d+ complete lines were read", err[-1])
    assert not list(warehouse.glob("*/v*/manifest.json"))


def test_split_step_stops_on_a_truncated_dump_naming_it_and_leaves_no_split_marker(tmp_path):
    from sources.dumps import DumpError

    bad = tmp_path / "RS_2023-02.zst"
    bad.write_bytes(zstandard.ZstdCompressor().compress(b'{"id": "b", "title": "x"}\n' * 5000)[:-20])
    with pytest.raises(DumpError, match=r"RS_2023-02\.zst: truncated.*complete lines were read"):
        run_step(SplitStep, InputFile(str(bad), tmp_path / "shards", "RS_2023-02", 1000))
    assert not (tmp_path / "shards" / "split-RS_2023-02.done").exists()


def test_build_from_praw_records_the_query_and_never_the_credentials(prefect_harness, tmp_path, monkeypatch, capsys):
    secret = "praw-secret-do-not-store"
    monkeypatch.setenv("praw_client_id", "cid-42")
    monkeypatch.setenv("praw_client_secret", secret)
    monkeypatch.setenv("praw_user_agent", "express-tests/0.1 (by u/express)")
    rng = random.Random(3)
    subs = [{"id": f"q{i}", "title": f"Day {i}", "selftext": story(100 + i, rng) + f" Honestly I am {('guilty', 'anxious')[i % 2]} most days.",
             "subreddit": "offmychest",
             "author": f"poster{i}", "created_utc": 1710000000 + i, "over_18": i == 2} for i in range(6)]
    with FakeReddit(subs, page_size=2) as fake:
        fake.fail_next = [429]
        data = load_recipe(REPO / "configs" / "express.toml").to_dict()
        data["sources"].update(oauth_url=fake.url, reddit_url=fake.url, backoff_seconds=0.01, max_backoff_seconds=0.05)
        data["splits"].update(train=0.8, validation=0.1, test=0.1)
        recipe_from_dict(data)  # the shipped recipe, pointed at the fake server, still validates
        config = tmp_path / "express-test.toml"
        config.write_text(_toml(data))
        code = express(["build", "--praw-query", "guilty", "--praw-query", "anxious",
                        "--warehouse", str(tmp_path / "wh"), "--config", str(config)])
    out = capsys.readouterr().out.strip().splitlines()
    assert code == 0 and fake.errors_served == [429]
    manifest = json.loads(Path(out[-1]).read_text())
    (inp,) = manifest["inputs"]
    assert inp["kind"] == "praw" and inp["query"]["terms"] == ["guilty", "anxious"] and len(inp["sha256"]) == 64
    assert manifest["stages"]["ingest"]["dropped"] == {"nsfw": 1}
    assert manifest["stages"]["ingest"]["read"] == 6  # each post matches exactly one of the two terms
    for f in (tmp_path / "wh").rglob("*"):
        if f.is_file():
            assert secret.encode() not in f.read_bytes(), f


def _toml(data: dict) -> str:
    def val(v):
        return json.dumps(v) if not isinstance(v, bool) else str(v).lower()
    return "\n".join(f"[{sec}]\n" + "\n".join(f"{k} = {val(v)}" for k, v in body.items()) for sec, body in data.items()) + "\n"


def test_build_without_any_input_fails_with_one_line(tmp_path, capsys):
    code = express(["build", "--warehouse", str(tmp_path / "wh"), "--config", str(REPO / "configs" / "dumps.toml")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == USER_ERROR and err == ["express build: nothing published: no input dump: give --input FILE (or a folder of "
                                 "dumps), --praw-query TERM, or a recipe with [sources] kind = \"praw\""]
