"""The weekly rebuild with `[orchestrate] sync_takedowns = true` (a real Prefect flow, real praw against
the fake Reddit server): it asks Reddit about the latest release's posts first, and a post gone from
Reddit ends up in no release but the withdrawn one. Off by default, and then not in the recipe's record."""
from __future__ import annotations

import json

import pytest

from schemas.config import Recipe, load_recipe
from tests.fakes.reddit_server import FakeReddit
from tests.sources.test_praw_source import creds  # noqa: F401  (creds: fixture)
from tests.takedowns.conftest import CONFIG, raw_posts, relocated, rows
from warehouse.layout import Warehouse

pytestmark = pytest.mark.slow  # a scheduled rebuild flow on a demo build (tests/conftest.py)


def test_the_switch_is_off_by_default_and_recorded_only_when_on(tmp_path):
    assert Recipe().orchestrate.sync_takedowns is False
    assert "sync_takedowns" not in Recipe().to_dict()["orchestrate"]
    recipe = tmp_path / "r.toml"
    recipe.write_text("[orchestrate]\nsync_takedowns = true\n")
    assert load_recipe(recipe).to_dict()["orchestrate"]["sync_takedowns"] is True


def test_the_weekly_rebuild_syncs_then_applies_what_reddit_deleted(creds, built, tmp_path):
    from flows.deployments import scheduled_rebuild_flow

    root = relocated(built.root, tmp_path / "wh")
    in_v1 = {r["post_id"] for r in rows(root)}
    served = [{**p, "selftext": "[deleted]", "author": "[deleted]"} if p["id"] == min(in_v1) else p
              for p in raw_posts(built.dump) if p["id"] in in_v1]
    with FakeReddit(served) as fake:
        recipe = tmp_path / "weekly.toml"
        recipe.write_text(open(CONFIG).read().replace('timezone = "UTC"', 'timezone = "UTC"\nsync_takedowns = true')
                          + f'\n[sources]\noauth_url = "{fake.url}"\nreddit_url = "{fake.url}"\n')
        out = scheduled_rebuild_flow([str(built.dump)], str(root), str(recipe))
        asked = sum(r["path"].rstrip("/") == "/api/info" for r in fake.requests)
    assert asked == -(-len(in_v1) // 100)  # 100 fullnames a request
    latest = Warehouse(root).versions("express-demo")[-1]
    assert latest != "v1" and min(in_v1) not in {r["post_id"] for r in rows(root, latest)}
    assert json.loads((root / "express-demo" / "v1.withdrawn.json").read_text())["successor"] == f"express-demo/{latest}"
    assert out["takedowns"]["withdrawn"].keys() == {"express-demo/v1"}
    ledger = [json.loads(x) for p in sorted((root / "takedowns" / "ledger").glob("*.jsonl"))
              for x in p.read_text().splitlines()]
    assert [(e["post_id"], e["reason"]) for e in ledger if e["kind"] == "post"] == [(f"t3_{min(in_v1)}",
                                                                                      "deleted on Reddit")]
