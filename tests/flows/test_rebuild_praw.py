"""A scheduled rebuild that also pulls live results (real praw against the fake Reddit server, real
Prefect flow): only items newer than the stored checkpoint are read, nothing new publishes nothing,
new posts become a new version whose manifest names its parent and lists the pull with its query."""
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.fakes.reddit_server import FakeReddit
from tests.sources.test_praw_source import SECRET, creds  # noqa: F401  (creds: fixture)

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "configs" / "demo.toml"


def _posts(month: str, n: int, seed: int, prefix: str) -> list[dict]:
    from sources.demo import DemoSpec, demo_records

    return [{**r, "id": prefix + r["id"]} for r in demo_records(DemoSpec(posts=n, month=month, seed=seed, malformed=0))]


def _recipe(path: Path, fake: FakeReddit, kind: str) -> Path:
    path.write_text(CONFIG.read_text() + f"""
[sources]
kind = "{kind}"
listing = "new"
subreddits = ["all"]
limit = 500
oauth_url = "{fake.url}"
reddit_url = "{fake.url}"
backoff_seconds = 0.5
max_backoff_seconds = 1.0
max_retries = 1
""")
    return path


def _example_ids(manifest: dict, wh: Path) -> list[str]:
    data = wh / manifest["dataset"] / manifest["version"] / "data"
    return [i for p in sorted(data.glob("*.parquet")) for i in pq.read_table(p).column("post_id").to_pylist()]


def test_scheduled_rebuild_pulls_only_new_praw_results_and_publishes_them_as_a_child_version(
        prefect_harness, creds, tmp_path, capsys):
    from flows.cli import main
    from tests.builds import rebuild
    from warehouse.releases.diff import diff_releases
    from warehouse.layout import Warehouse
    from warehouse.releases.release import Release

    wh = tmp_path / "wh"
    with FakeReddit(_posts("2024-01", 150, 5, "j")) as fake:
        praw_recipe = _recipe(tmp_path / "praw.toml", fake, "praw")
        fake.fail_next = [429, 429]  # outlasts the scraper's one retry: the Prefect task retries the pull
        first = rebuild([], str(wh), str(praw_recipe), shard_lines=100, workers=0)
        v1 = json.loads(Path(first["release"]["manifest"]).read_text())
        assert fake.errors_served == [429, 429]
        assert v1["version"] == "v1" and first["scrape"]["new_items"] == 150
        (entry,) = v1["inputs"]
        assert entry["kind"] == "praw" and entry["query"]["listing"] == "new" and entry["query"]["pull"] == 1

        before = len(fake.requests)
        same = rebuild([], str(wh), str(praw_recipe), shard_lines=100, workers=0)
        assert same["release"] is None and same["message"].startswith("up to date: express-demo/v1")
        assert same["scrape"]["path"] is None and same["scrape"]["files"] == [entry["path"]]
        assert same["message"].endswith("(praw: 0 new, 2 skipped as already seen)")  # the newest, then an older one
        assert len([r for r in fake.requests[before:] if r["path"] == "/r/all/new"]) == 1  # stopped at once

        fake.submissions += _posts("2024-02", 60, 77, "n")
        before = len(fake.requests)
        dumps_recipe = _recipe(tmp_path / "dumps.toml", fake, "dumps")  # the flag asks for the pull
        capsys.readouterr()
        code = main(["rebuild", "--config", str(dumps_recipe), "--warehouse", str(wh), "--workers", "0",
                     "--shard-lines", "100", "--scrape"])
        out = capsys.readouterr()
        listed = [r for r in fake.requests[before:] if r["path"] == "/r/all/new"]
    assert code == 0 and len(listed) == 1
    v2 = json.loads(Path(out.out.strip().splitlines()[-1]).read_text())
    assert v2["version"] == "v2" and v2["parent"] == "express-demo/v1"
    (new_input,) = v2["incremental"]["new_inputs"]
    pulled = [json.loads(line)["id"] for line in Path(new_input["path"]).read_text().splitlines()]
    assert Path(new_input["path"]).name.endswith("-0002.jsonl") and sorted(pulled) == sorted(
        p["id"] for p in _posts("2024-02", 60, 77, "n"))
    assert new_input["kind"] == "praw" and new_input["query"]["pull"] == 2
    assert v2["incremental"]["scrape"]["new_items"] == 60 and v2["incremental"]["scrape"]["skipped_seen"] == 2
    assert "[scrape] pull 2: 60 new items" in out.err and "stopped at the checkpoint" in out.err
    assert v2["funnel"]["read"] == v1["funnel"]["read"] + 60
    assert not list((wh / "runs" / v2["run_id"] / "shards").glob("split-praw-*-0001.done"))  # pull 1 not re-read
    assert SECRET not in json.dumps(v2) and "client-id-123" not in json.dumps(v2)

    new_rows = [i for i in _example_ids(v2, wh) if i.startswith("n")]
    d = diff_releases(Release.find(Warehouse.at(wh), "express-demo/v1"), Release.find(Warehouse.at(wh), "express-demo/v2"))
    assert new_rows and sum(s["added"] for s in d["splits"].values()) == len(new_rows)
    assert sum(s["removed"] for s in d["splits"].values()) == 0
    assert sorted(_example_ids(v1, wh)) == sorted(i for i in _example_ids(v2, wh) if not i.startswith("n"))


def test_pull_tasks_retry_rate_limits_but_not_missing_or_rejected_credentials():
    from prefect.states import Failed

    from flows.build import _retry_unless_it_cannot_heal, pull_task
    from sources.praw_source import REFUSALS, MissingCredentials, Refused, ScrapeError

    assert pull_task.retries == 2 and pull_task.retry_condition_fn is _retry_unless_it_cannot_heal
    assert _retry_unless_it_cannot_heal(pull_task, None, Failed(data=ScrapeError("gave up after 5 retries")))
    assert not _retry_unless_it_cannot_heal(pull_task, None, Failed(data=MissingCredentials("praw credentials missing")))
    assert not _retry_unless_it_cannot_heal(pull_task, None, Failed(data=Refused(REFUSALS[401])))
