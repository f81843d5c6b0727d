"""A pull is exactly-once under kill -9: a real pull process (real praw against the fake Reddit server on
127.0.0.1) is killed with SIGKILL, at chosen points of its write + checkpoint protocol, and from outside
while the server holds a request (a chosen one, or one drawn at random); the same pull then resumes and
its file holds every item (a ~150-word post and its comments) exactly once, in the listing's order."""
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from schemas.config import SourcesConfig
from sources.praw_pulls import CHECKPOINT_FORMAT, Checkpoint, pull
from tests.fakes.reddit_server import FakeReddit
from tests.sources.test_praw_source import SECRET, creds, quiet  # noqa: F401  (creds: fixture)

pytestmark = pytest.mark.slow  # pull processes killed and resumed (tests/conftest.py)

REPO = Path(__file__).resolve().parents[2]
TERMS = ["sad", "lonely"]
WORDS = ("the bus was late again and my sister kept calling about the rent while I walked home past the old "
         "bakery on the corner thinking about work and the long winter ahead of us all this year").split()


def corpus(n: int = 24) -> tuple[list[dict], dict[str, list[dict]]]:
    """n submissions of 120-180 words, each matching one of TERMS; every third has two comments."""
    rng = random.Random(11)
    subs, comments = [], {}
    for i in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(120, 180))]
        words.insert(rng.randint(0, len(words)), f"I feel so {TERMS[i % 2]} tonight")
        subs.append({"id": f"p{i:03d}", "title": f"Night {i}", "selftext": " ".join(words), "subreddit": "offmychest",
                     "author": f"writer{i}", "created_utc": 1700000000 + i, "over_18": False, "score": i})
        if i % 3 == 0:
            comments[f"p{i:03d}"] = [{"id": f"c{i:03d}{k}", "body": " ".join(rng.choice(WORDS) for _ in range(40)),
                                      "link_id": f"t3_p{i:03d}", "parent_id": f"t3_p{i:03d}", "author": f"reply{k}",
                                      "subreddit": "offmychest", "created_utc": 1700000100 + i} for k in range(2)]
    return subs, comments


def expected_rows(subs: list[dict], comments: dict[str, list[dict]]) -> list[str]:
    """Row ids of a whole pull: per term, its posts newest first, each followed by its comments."""
    out = []
    for term in TERMS:
        for s in sorted((s for s in subs if term in s["selftext"]), key=lambda s: -s["created_utc"]):
            out += [s["id"]] + [c["id"] for c in comments.get(s["id"], [])]
    return out


SOURCES = {"kind": "praw", "include_comments": True, "backoff_seconds": 0.01, "max_backoff_seconds": 0.05}


def _cfg(url: str) -> SourcesConfig:
    return SourcesConfig(**SOURCES, oauth_url=url, reddit_url=url)


# The pull process (kept free of pytest and the test modules, so it starts in ~0.3 s). With `crash`
# = [n, step] it SIGKILLs itself at that step of item n's write + checkpoint (no cleanup runs).
CHILD = """
import json, os, signal, sys
from schemas.config import SourcesConfig
from sources.praw_pulls import Checkpoint, pull

args = json.loads(sys.argv[1])
if args["crash"]:
    at, when = args["crash"]
    append, commit, items = Checkpoint._append, Checkpoint.commit, [0]

    def _append(self, rec):
        if "id" in rec:
            items[0] += 1
            if items[0] == at and when == "rows-without-line":  # item n's rows are in the file, its line is not
                os.kill(os.getpid(), signal.SIGKILL)
            if items[0] == at and when == "torn-line":  # half of item n's line
                line = json.dumps(rec).encode() + b"\\n"
                self._log.write(line[: len(line) // 2])
                self._log.flush()
                os.kill(os.getpid(), signal.SIGKILL)
        append(self, rec)
        if "id" in rec and items[0] == at and when == "after-line":
            os.kill(os.getpid(), signal.SIGKILL)

    def _commit(self, number):
        commit(self, number)
        if when == "commit-before-rename":
            os.kill(os.getpid(), signal.SIGKILL)

    Checkpoint._append, Checkpoint.commit = _append, _commit
cfg = SourcesConfig(**args["sources"], oauth_url=args["url"], reddit_url=args["url"])
print(json.dumps(pull(cfg, args["terms"], args["out"], log=lambda line: None).to_dict()))
"""


def spawn(fake: FakeReddit, out: Path, crash: tuple[int, str] | None = None) -> subprocess.Popen:
    env = {**os.environ, "praw_client_id": "client-id-123", "praw_client_secret": SECRET,
           "praw_user_agent": "express-tests/0.1 (by u/express)"}
    arg = json.dumps({"url": fake.url, "out": str(out), "crash": crash, "terms": TERMS, "sources": SOURCES})
    return subprocess.Popen([sys.executable, "-c", CHILD, arg], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def _row_ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_bytes().splitlines() if line.endswith(b"}")]


def resume_and_check(fake: FakeReddit, out: Path, subs: list[dict], comments: dict, committed: bool = False) -> None:
    """The same pull again, in this process: every row once, in order, in the one file of pull 1 (when the
    killed pull had `committed`, this one finishes its rename and finds nothing new)."""
    result = pull(_cfg(fake.url), TERMS, out, log=quiet)
    (path,) = result.files
    assert (result.pull, result.path) == ((None, None) if committed else (1, path))
    assert [json.loads(x)["id"] for x in path.read_text().splitlines()] == expected_rows(subs, comments)
    assert not list(out.glob("*.part")) and SECRET not in path.read_text()
    (log_file,) = out.glob("praw-*.checkpoint.jsonl")
    (snapshot,) = log_file.read_text().splitlines()
    assert json.loads(snapshot)["format"] == CHECKPOINT_FORMAT and json.loads(snapshot)["pulls"] == 1
    newest = {k: sorted(m.ids) for k, m in Checkpoint.load(log_file).marks.items()}
    last = {t: max((s for s in subs if t in s["selftext"]), key=lambda s: s["created_utc"])["id"] for t in TERMS}
    assert newest == {f"search|all|{t}|new|all": [i] for t, i in last.items()}


@pytest.mark.parametrize("crash", [(5, "rows-without-line"), (5, "torn-line"), (5, "after-line"),
                                   (0, "commit-before-rename")], ids=lambda c: c[1])
def test_kill_9_at_each_step_of_write_and_checkpoint_then_resume_hands_on_every_item_once(creds, tmp_path, crash):
    subs, comments = corpus()
    with FakeReddit(subs, comments, page_size=5) as fake:
        proc = spawn(fake, tmp_path, crash)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL, err.decode()[-2000:]
        want = expected_rows(subs, comments)
        if crash[1] == "commit-before-rename":  # committed, but still named .part
            (part,) = tmp_path.glob("*.jsonl.part")
            assert _row_ids(part) == want and not list(tmp_path.glob("*-0001.jsonl"))
        else:
            (part,) = tmp_path.glob("*.jsonl.part")
            (log_file,) = tmp_path.glob("*.checkpoint.jsonl")
            logged = [json.loads(x)["id"] for x in log_file.read_bytes().split(b"\n")[1:-1]]
            written = [r for r in _row_ids(part) if r.startswith("p")]
            kept = {"rows-without-line": 4, "torn-line": 4, "after-line": 5}[crash[1]]
            assert logged == [r for r in want if r.startswith("p")][:kept]  # the item lines the log holds
            assert written == [r for r in want if r.startswith("p")][:5]  # item 5's rows are in the file
        resume_and_check(fake, tmp_path, subs, comments, committed=crash[1] == "commit-before-rename")


def test_kill_9_from_outside_while_the_server_holds_a_request_then_resume(creds, tmp_path):
    subs, comments = corpus()
    with FakeReddit(subs, comments, page_size=5) as fake:
        fake.stall_at = 9  # some way into the first query: listing pages and comment fetches before it
        proc = spawn(fake, tmp_path)
        assert fake.stalled.wait(60), "the pull never reached the held request"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        fake.release.set()
        (part,) = tmp_path.glob("*.jsonl.part")
        before = _row_ids(part)
        assert proc.returncode == -signal.SIGKILL and 0 < len(before) < len(expected_rows(subs, comments))
        resume_and_check(fake, tmp_path, subs, comments)


def test_kill_9_at_random_points_several_times_then_resume(creds, tmp_path):
    """Four pulls, each killed while the server holds its k-th request, k drawn at random (seeded):
    each kill lands at a known point of the listing, whatever the host's speed, so each pull has
    handed on all it read before that request and the file only grows."""
    rng = random.Random(2024)
    subs, comments = corpus(60)
    with FakeReddit(subs, comments, page_size=4) as fake:
        sizes = []
        for _ in range(4):
            fake.stalled.clear()
            fake.release.clear()
            fake.stall_at = fake.api_calls + rng.randint(3, 12)  # a listing page or a comment fetch
            proc = spawn(fake, tmp_path)
            assert fake.stalled.wait(60), "the pull never reached the held request"
            proc.send_signal(signal.SIGKILL)
            _, err = proc.communicate(timeout=30)
            fake.release.set()
            assert proc.returncode == -signal.SIGKILL, err.decode()[-2000:]
            part = next(tmp_path.glob("*.jsonl.part"), None)
            sizes.append(part.stat().st_size if part else 0)
        fake.stall_at = None
        assert sizes == sorted(sizes) and len(set(sizes)) == 4 and sizes[0] > 0, sizes  # progress kept, each time
        resume_and_check(fake, tmp_path, subs, comments)
