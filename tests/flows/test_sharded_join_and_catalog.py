"""The sharded build with comment dumps: comments inherit NSFW from submissions in other shards exactly
as in `express build`; and a rerun after a crash before the catalog registration restores the views."""
import hashlib
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from warehouse.releases import catalog

REPO = Path(__file__).resolve().parents[2]
SHARD_LINES = 40
NSFW_AT = 5  # the demo submission made NSFW (in a SFW subreddit, so only the join can drop its comments)


def _data_hashes(manifest: str | Path) -> dict[str, str]:
    rel = Path(manifest).parent
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((rel / "data").glob("*.parquet"))}


@pytest.fixture(scope="module")
def join_inputs(tmp_path_factory) -> dict:
    """RS dump of demo submissions (one NSFW) and an RC dump whose comments point at it or at others."""
    from sources.demo import DemoSpec, demo_records

    tmp = tmp_path_factory.mktemp("join-inputs")
    records = demo_records(DemoSpec(posts=150, malformed=2))
    posts = [r for r in records if isinstance(r, dict)]
    nsfw = posts[NSFW_AT]
    nsfw.update(over_18=True, subreddit="offmychest")
    bodies = [p for p in posts if p["selftext"] not in ("[deleted]", "[removed]") and not p["over_18"]
              and p["author"] != "AutoModerator"]
    comments = []
    for k, p in enumerate(bodies[:36]):
        parent = nsfw["id"] if k % 2 == 0 else bodies[-1 - k]["id"]
        comments.append({"id": f"c{k:05d}", "link_id": f"t3_{parent}", "subreddit": "offmychest",
                         "author": f"commenter_{k}", "created_utc": p["created_utc"] + 60,
                         "body": f"Replying to thread {k} here. {p['selftext']}", "score": 1})
    rs, rc = tmp / "RS_2024-01.jsonl", tmp / "RC_2024-01.jsonl"
    # the last 4 comments sit in the submission dump's last shard, which must also be joined
    rs.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records + comments[-4:]) + "\n")
    rc.write_text("\n".join(json.dumps(c) for c in comments[:-4]) + "\n")
    recipe = (REPO / "configs" / "demo.toml").read_text().replace("data_docs = true", "data_docs = false")
    config = tmp / "recipe.toml"
    config.write_text(recipe)
    joined = {c["id"] for c in comments if c["link_id"] == f"t3_{nsfw['id']}"}
    return {"inputs": [str(rc), str(rs)], "config": str(config), "joined": joined,
            "nsfw_ids": [p["id"] for p in posts if p["over_18"]]}


@pytest.fixture(scope="module")
def sharded_join_build(prefect_harness, join_inputs, tmp_path_factory) -> dict:
    from tests.builds import build

    wh = tmp_path_factory.mktemp("sharded-join")
    built = build(join_inputs["inputs"], str(wh), join_inputs["config"], SHARD_LINES, workers=0)
    return {**built, "warehouse": str(wh)}


def test_sharded_build_joins_comments_to_nsfw_submissions_like_the_unsharded_build(
        join_inputs, sharded_join_build, tmp_path):
    from tests.builds import build

    plain = build(join_inputs["inputs"], str(tmp_path / "plain"), join_inputs["config"], 10**6, workers=0)
    assert plain["shards"] == 2  # one shard an input
    sharded_manifest = json.loads(Path(sharded_join_build["release"]["manifest"]).read_text())
    plain_manifest = json.loads(Path(plain["release"]["manifest"]).read_text())
    assert sharded_join_build["shards"] == 5  # 4 submission shards, 1 comment shard
    assert sharded_manifest["funnel"] == plain_manifest["funnel"]
    assert sharded_manifest["stages"] == plain_manifest["stages"]
    assert _data_hashes(sharded_join_build["release"]["manifest"]) == _data_hashes(plain["release"]["manifest"])
    f = sharded_manifest["funnel"]
    assert f["read"] == f["kept"] + sum(f["dropped"].values()) + f["malformed"]
    quarantine = pq.read_table(next(Path(sharded_join_build["warehouse"]).glob("quarantine/*/ingest.parquet")))
    dropped = {q["post_id"]: q["reason"] for q in quarantine.to_pylist() if q["post_id"]}
    assert {c: dropped.get(c) for c in join_inputs["joined"]} == {c: "nsfw" for c in join_inputs["joined"]}
    assert {"c00032", "c00034"} <= join_inputs["joined"]  # the two joined comments in the RS dump
    wh = Path(sharded_join_build["warehouse"])
    id_files = sorted(wh.glob("runs/*/shards/RS_2024-01-*/nsfw-submissions.txt"))
    assert len(id_files) == 4 and "".join(p.read_text() for p in id_files).split() == join_inputs["nsfw_ids"]


def _views(wh: Path) -> dict[str, int]:
    con = catalog.connect(wh)
    try:
        names = [r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()]
        return {n: con.execute(f"SELECT count(*) FROM {n}").fetchone()[0] for n in names}
    finally:
        con.close()


def _view_sql(wh: Path, name: str) -> str:
    con = catalog.connect(wh)
    try:
        return con.execute("SELECT sql FROM duckdb_views() WHERE view_name = ?", [name]).fetchone()[0]
    finally:
        con.close()


def test_rerun_and_publish_restore_catalog_views_of_an_already_published_run(join_inputs, sharded_join_build):
    from flows.build import publish_flow
    from schemas.config import load_recipe
    from tests.builds import build
    from warehouse.layout import Warehouse
    from warehouse.releases.publish import publish_release

    wh = Path(sharded_join_build["warehouse"])
    before = _views(wh)
    assert before["express_demo_v1_train"] == before["express_demo_latest_train"] > 0
    (wh / "catalog.duckdb").unlink()  # as if killed between the release rename and the registration
    again = build(join_inputs["inputs"], str(wh), join_inputs["config"], SHARD_LINES, workers=0)
    assert again["release"]["already_published"] is True and again["release"]["version"] == "v1"
    assert _views(wh) == before
    assert [p.parent.name for p in wh.glob("express-demo/v*/manifest.json")] == ["v1"]

    # a newer release exists: restoring v1's views must not repoint `latest` back at v1
    examples = wh / "runs" / sharded_join_build["run_id"] / "examples.parquet"
    v2 = publish_release(examples, Warehouse.at(wh), load_recipe(join_inputs["config"]), {"run_id": "another-run"})
    con = catalog.connect(wh, read_only=False)
    con.execute("DROP VIEW express_demo_v1_train")
    con.close()
    published = publish_flow(str(wh), sharded_join_build["run_id"])
    assert published["version"] == "v1" and published["already_published"] is True
    assert _views(wh)["express_demo_v1_train"] == before["express_demo_v1_train"]
    assert f"/{v2.version}/" in _view_sql(wh, "express_demo_latest_train") and v2.version == "v2"
    assert "/v1/" in _view_sql(wh, "express_demo_v1_train")
