"""Every kind of user error ends `express` with a short message on stderr that names the file (and
line or key), a non-zero exit and no traceback; --debug shows the traceback. Real subprocesses."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)

REPO = Path(__file__).resolve().parents[2]


def express(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


def short_error(proc: subprocess.CompletedProcess, *needles: str, max_lines: int = 3) -> list[str]:
    """The command failed with a few stderr lines holding every needle, and no traceback (progress
    lines, `[step] ...`, may come before)."""
    lines = [line for line in proc.stderr.splitlines() if line.strip() and not line.startswith("[")]
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr and len(lines) <= max_lines, proc.stderr
    for needle in needles:
        assert needle in proc.stderr, (needle, proc.stderr)
    return lines


def test_a_missing_input_names_the_file_before_any_flow_starts(tmp_path):
    missing = tmp_path / "does-not-exist.zst"
    proc = express("build", "--input", str(missing), "--warehouse", str(tmp_path / "wh"))
    [line] = short_error(proc, str(missing), "no such file")
    assert line.startswith("express build: nothing published:")
    assert not (tmp_path / "wh" / "runs").exists()  # refused before a run folder was made


def test_debug_shows_the_traceback_of_the_same_error(tmp_path):
    proc = express("build", "--input", str(tmp_path / "gone.zst"), "--debug")
    assert proc.returncode != 0 and "Traceback" in proc.stderr and "gone.zst" in proc.stderr
    proc = express("build", "--input", str(tmp_path / "gone.zst"), env={"EXPRESS_DEBUG": "1"})
    assert "Traceback" in proc.stderr


def test_a_folder_without_dumps_is_not_a_build(tmp_path):
    short_error(express("build", "--input", str(tmp_path)), "no input dump in", str(tmp_path))


@pytest.mark.parametrize("section,line,needle", [
    ("filters", "bogus_key = 1", "unknown key 'bogus_key'"),
    ("extract", 'forms = "weird"', "forms must be 'reference' or 'extended'"),
    ("filters", 'min_words = "five"', "min_words: expected a number"),
])
def test_a_bad_recipe_key_or_value_names_the_file_and_key(tmp_path, section, line, needle):
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(f"[{section}]\n{line}\n")
    dump = tmp_path / "RS_2024-01.jsonl"
    dump.write_text(json.dumps({"id": "a", "title": "t", "selftext": "I feel so sad today"}) + "\n")
    short_error(express("build", "--input", str(dump), "--config", str(recipe)), str(recipe), needle)


def test_rejected_praw_credentials_end_the_build_at_once_in_one_line(prefect_harness, tmp_path):
    """The pull is not retried (a retry cannot make a wrong secret right) and nothing is published."""
    from prefect.settings import PREFECT_API_URL

    from tests.fakes.reddit_server import FakeReddit

    recipe = tmp_path / "praw.toml"
    secret = "wrong-secret-4f1c"
    with FakeReddit([]) as fake:
        fake.reject_credentials = True
        recipe.write_text(f'[sources]\nkind = "praw"\nterms = ["sad"]\noauth_url = "{fake.url}"\n'
                          f'reddit_url = "{fake.url}"\n')
        proc = express("build", "--config", str(recipe), "--warehouse", str(tmp_path / "wh"),
                       env={"PREFECT_API_URL": PREFECT_API_URL.value(), "praw_client_id": "id-1",
                            "praw_client_secret": secret, "praw_user_agent": "express-tests/0.1"})
        tokens = [r for r in fake.requests if r["path"] == "/api/v1/access_token"]
    [line] = short_error(proc, "Reddit rejected the praw credentials", "praw_client_secret")
    assert line.startswith("express build: nothing published:") and secret not in proc.stderr + proc.stdout
    assert len(tokens) == 1 and not list((tmp_path / "wh").glob("*/v*"))


@pytest.mark.parametrize("text,needles", [
    ("[filters\nmin_words = 3\n", ["invalid TOML", "line 1"]),  # tomllib names where it stopped
    ("[filters]\nmin_words = \n", ["invalid TOML", "line 2"]),
    ("[bogus]\nkey = 1\n", ["unknown section [bogus]"]),
])
def test_a_recipe_that_is_not_toml_or_has_an_unknown_section_names_the_file(tmp_path, text, needles):
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(text)
    dump = tmp_path / "RS_2024-01.jsonl"
    dump.write_text(json.dumps({"id": "a", "title": "t", "selftext": "I feel so sad today"}) + "\n")
    short_error(express("build", "--input", str(dump), "--config", str(recipe), "--warehouse", str(tmp_path / "wh")),
                str(recipe), *needles)
    assert not (tmp_path / "wh" / "runs").exists()


def test_an_unknown_release_names_the_release_and_the_warehouse(tmp_path):
    wh = tmp_path / "wh"
    for command in (["report", "--release", "express-demo/v9"], ["card", "--release", "express-demo/v9", "--out",
                                                                  str(tmp_path / "card")]):
        short_error(express(*command, "--warehouse", str(wh)), "express-demo/v9", str(wh))


def test_an_unknown_run_to_resume_is_named(tmp_path):
    short_error(express("build", "--resume", "run-0000", "--warehouse", str(tmp_path)), "no run 'run-0000'")


def test_a_failed_gate_prints_its_failed_checks_briefly_and_publishes_nothing(prefect_harness, demo_dump, tmp_path):
    from prefect.settings import PREFECT_API_URL

    recipe = tmp_path / "strict.toml"
    recipe.write_text((REPO / "configs" / "demo.toml").read_text()
                      .replace("max_label_share = 0.25", "max_label_share = 0.01").replace("data_docs = true", "data_docs = false"))
    wh = tmp_path / "wh"
    proc = express("build", "--input", str(demo_dump), "--config", str(recipe), "--warehouse", str(wh),
                   env={"PREFECT_API_URL": PREFECT_API_URL.value()})
    lines = short_error(proc, "quality gate failed", "nothing published", max_lines=4)
    assert any("label" in line for line in lines)
    assert not list(wh.glob("express-demo/v*"))
    assert len(list(wh.glob("rejected/express-demo/v1-*"))) == 1  # the gate ran once: a refusal is not retried


@pytest.mark.parametrize("command", [
    ["score", "--predictions", "{f}"],
    ["agreement", "{f}", "{f}"],
    ["extract", "--input", "{f}", "--output", "{out}"],
])
def test_a_jsonl_line_that_is_not_an_object_names_the_file_and_line(tmp_path, command):
    """One reader (common.jsonl) for every JSONL input: a blank line is skipped but counted."""
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps({"id": "1", "text": "I feel sad", "label": "sad", "labels": ["sad"], "output": "sad"})
                 + "\n\n[1, 2]\n")
    out = tmp_path / "out.jsonl"
    proc = express(*(a.format(f=f, out=out) for a in command))
    [line] = short_error(proc, f"{f}:3: each line must be a JSON object")
    assert line.startswith(f"express {command[0]}: ") and not out.exists()


def test_split_and_publish_retry_what_may_clear_but_not_a_damaged_dump_or_a_refused_release(tmp_path):
    from prefect.states import Failed

    from flows.build import _retry_unless_it_cannot_heal, publish_task, step_task
    from pipeline.split import SplitStep
    from sources.dumps import DumpError
    from warehouse.releases.publish import GateFailed, PublishError

    split_task = step_task(SplitStep)
    for step in (split_task, publish_task):
        assert step.retries == 2 and step.retry_condition_fn is _retry_unless_it_cannot_heal
    retry = lambda exc: _retry_unless_it_cannot_heal(split_task, None, Failed(data=exc))
    assert retry(OSError("No space left on device")) and retry(TimeoutError("lock held"))
    assert not retry(DumpError(f"{tmp_path}/RS_2024-01.zst: truncated zstd stream"))
    assert not retry(GateFailed("quality gate failed for express-demo/v1", tmp_path))
    assert not retry(PublishError("release express-demo/v1 already exists"))


@pytest.fixture(scope="module")
def small_dump(tmp_path_factory) -> Path:
    from sources.demo import DemoSpec, write_demo_dump

    return write_demo_dump(tmp_path_factory.mktemp("small"), DemoSpec(posts=40))


@pytest.mark.parametrize(("value", "reason"), [("-1", "must be at least 1, got -1"), ("0", "must be at least 1, got 0"),
                                               ("2.5", "expected an integer, got '2.5'")])
def test_a_shard_size_below_one_line_is_refused_before_any_run(tmp_path, small_dump, value, reason):
    """A negative size once wrote empty shards without end; 0 silently meant the default."""
    proc = express("build", "--input", str(small_dump), "--shard-lines", value, "--warehouse", str(tmp_path / "wh"))
    assert proc.returncode == 2
    short_error(proc, "--shard-lines", reason, max_lines=3)
    assert not (tmp_path / "wh" / "runs").exists()


@pytest.mark.parametrize(("recipe", "message"), [
    ("[filters]\nmin_words = 5.7\n", "[filters].min_words: expected an integer, got 5.7"),
    ("[orchestrate]\nshard_lines = -100\n", "[orchestrate].shard_lines: must be at least 1, got -100"),
])
def test_a_recipe_number_out_of_kind_or_range_stops_the_build_before_any_run(tmp_path, small_dump, recipe, message):
    config = tmp_path / "recipe.toml"
    config.write_text(recipe)
    proc = express("build", "--input", str(small_dump), "--config", str(config), "--warehouse", str(tmp_path / "wh"))
    assert proc.returncode == 2
    [line] = short_error(proc, f"{config} {message}")
    assert not (tmp_path / "wh" / "runs").exists()


def test_a_file_of_another_format_named_directly_is_refused_before_any_run(tmp_path):
    import gzip

    given = tmp_path / "RS_2024-01.gz"
    given.write_bytes(gzip.compress(b'{"id": "a1", "title": "t", "selftext": "I feel sad"}\n'))
    proc = express("build", "--input", str(given), "--warehouse", str(tmp_path / "wh"))
    assert proc.returncode == 2
    [line] = short_error(proc, f"{given}: not a dump this build reads", "*.zst, *.jsonl, *.ndjson")
    assert not (tmp_path / "wh" / "runs").exists()


def test_a_dump_of_no_posts_says_so_instead_of_every_post_dropped(tmp_path):
    """A JSON array saved as .jsonl (json.dump writes it on one line, or indented over many): every
    line is malformed, and the message says what was read."""
    given = tmp_path / "posts.jsonl"
    posts = [{"id": f"p{i}", "title": "t", "selftext": "I feel so sad today"} for i in range(5)]
    given.write_text(json.dumps(posts, indent=2) + "\n")
    proc = express("build", "--input", str(given), "--warehouse", str(tmp_path / "wh"))
    assert proc.returncode == 2
    lines = sum(1 for line in given.read_text().splitlines() if line.strip())
    short_error(proc, f"{lines} line(s) read, none of them a Reddit post as JSON", "ingest.parquet")
    assert "every post was dropped" not in proc.stderr
    assert not list((tmp_path / "wh").glob("*/v1"))
