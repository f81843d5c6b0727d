"""What a person waits for each command (issue 63): the wall seconds of a fresh `express` process,
for this checkout and for another one ("before": e.g. main's, with its own .venv), in alternating
pairs after one warm-up pair (which also fills each side's bytecode cache). Prints per command the
median seconds of both and the median of the pairs' ratios (after / before), then one JSON line.

    .venv/bin/python bench/commands.py --before /work/main --pairs 5
    .venv/bin/python bench/commands.py --before /work/main --only build,build-server --pairs 3

The commands: `evaluate --predictor most-frequent --limit 5`, `score`, `report`, `card`, `compare`,
`leaderboard`, `releases`, `--help` and an option error, on a demo warehouse made once (with this
checkout); `build`: a 1,000-post dump of bench/real_text.py into a fresh warehouse each run, with no
Prefect API configured, so the temporary API a build before it started is still there (a person's
next build); `build-first`: the same with no temporary API running (the first build, whose API
starts with it: the bench ends the API after each run); `build-server`: the same with
PREFECT_API_URL naming a running `prefect server start`. Every run shares one Prefect home made
before the first, so a command that starts a temporary API pays its start but not a new database's.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.real_text import RealTextSpec, write_dump  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
RELEASE = "express-demo/v2"
BY_HAND = ("evaluate", "score", "report", "card", "compare", "leaderboard", "releases", "help", "option-error")
BUILDS = ("build-first", "build", "build-server")


def express(checkout: Path) -> list[str]:
    return [str(checkout / ".venv" / "bin" / "python"), "-m", "flows.cli"]


def arguments(name: str, work: Path, side: str, run: int) -> list[str]:
    """The command line of `name` (without `express`); what it writes goes to the side's own paths."""
    wh = ["--warehouse", str(work / "wh")]
    runs = json.loads((work / "runs.json").read_text()) if (work / "runs.json").exists() else []
    return {
        "evaluate": ["evaluate", "--release", RELEASE, "--predictor", "most-frequent", "--limit", "5", *wh],
        "score": ["score", "--predictions", str(Path(runs[0]["path"]) / "predictions.jsonl") if runs else ""],
        "report": ["report", "--release", RELEASE, "--out", str(work / f"report-{side}.html"), *wh],
        "card": ["card", "--release", RELEASE, "--out", str(work / f"card-{side}"), *wh],
        "compare": ["compare", *(r["run_id"] for r in runs[:2]), *wh],
        "leaderboard": ["leaderboard", *wh],
        "releases": ["releases", *wh],
        "help": ["--help"],
        "option-error": ["leaderboard", "--format", "nonsense"],
        **dict.fromkeys(BUILDS, ["build", "--input", str(work / "in1k"), "--warehouse",
                                 str(work / f"build-{side}-{run}")]),
    }[name]


def prepare(work: Path, env: dict[str, str]) -> None:
    """The demo warehouse (two releases, three runs) and the 1,000-post dump, made once."""
    if not (work / "runs.json").exists():
        subprocess.run([*express(REPO), "demo", "--warehouse", str(work / "wh"), "--workdir", str(work / "demo-in")],
                       cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
        runs = sorted((work / "wh" / "evaluations").iterdir())
        (work / "runs.json").write_text(json.dumps([{"run_id": p.name, "path": str(p)} for p in runs]))
    if not (work / "in1k").exists():
        write_dump(work / "in1k", RealTextSpec(posts=1000))


def timed(cmd: list[str], cwd: Path, env: dict[str, str], expect: int) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != expect:
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return seconds


def compare(name: str, before: Path, pairs: int, work: Path, envs: dict[str, dict[str, str]]) -> dict:
    """`pairs` runs of each side, alternating (before, then after); the first pair warms up."""
    seconds: dict[str, list[float]] = {"before": [], "after": []}
    ratios = []
    for k in range(pairs + 1):
        pair = {}
        for side, checkout in (("before", before), ("after", REPO)):
            cmd = [*express(checkout), *arguments(name, work, side, k)]
            pair[side] = timed(cmd, checkout, envs[side], 2 if name == "option-error" else 0)
            if name == "build-first":
                end_temporary_apis(Path(envs[side]["PREFECT_HOME"]))
            shutil.rmtree(work / f"build-{side}-{k}", ignore_errors=True)
        if k:
            for side in pair:
                seconds[side].append(pair[side])
            ratios.append(pair["after"] / pair["before"])
    return {"before_s": statistics.median(seconds["before"]), "after_s": statistics.median(seconds["after"]),
            "ratio": statistics.median(ratios), "before": [round(s, 2) for s in seconds["before"]],
            "after": [round(s, 2) for s in seconds["after"]]}


def end_temporary_apis(home: Path) -> None:
    """End the temporary APIs recorded in the Prefect home (flows/prefect_api.py's files) and wait
    until they are gone."""
    import psutil

    from flows.prefect_api import Files

    for record in home.glob("express-api.*.json"):
        recorded = Files(record.with_suffix("")).recorded()
        if recorded is None:  # ended and forgotten since the glob
            continue
        try:
            proc = psutil.Process(recorded["pid"])
            proc.terminate()
            proc.wait(timeout=60)
        except psutil.NoSuchProcess:
            pass


class PrefectServer:
    """`prefect server start` on loopback for the build-server figure, on the bench's Prefect home."""

    def __init__(self, env: dict[str, str]):
        import socket

        import httpx

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/api"
        self.proc = subprocess.Popen([*express(REPO)[:1], "-m", "prefect", "server", "start", "--host", "127.0.0.1",
                                      "--port", str(port), "--no-ui"], env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if httpx.get(f"{self.url}/health").status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.2)
        raise SystemExit("prefect server start did not answer")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="the checkout measured as before (with its own .venv)")
    ap.add_argument("--only", help=f"comma-separated, of: {', '.join(BY_HAND + BUILDS)} (default: all)")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--workdir")
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="express-commands-"))
    work.mkdir(parents=True, exist_ok=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "EXPRESS_", "PYTHON"))}
    base["PREFECT_HOME"] = str(work / "prefect-home")
    envs = {side: {**base, "PYTHONPYCACHEPREFIX": str(work / f"pycache-{side}")} for side in ("before", "after")}
    prepare(work, envs["after"])
    names = args.only.split(",") if args.only else [*BY_HAND, *BUILDS]
    load = os.getloadavg()[0]
    print(f"{args.pairs} pairs a command (after one warm-up pair); before: {args.before}; load {load:.1f}; "
          f"workdir {work}")
    print(f"{'command':<14} {'before s':>9} {'after s':>8} {'after/before':>12}")
    results, server = {}, None
    for name in names:
        envs_now = envs
        if name == "build-server":
            server = server or PrefectServer(envs["after"])
            envs_now = {side: {**env, "PREFECT_API_URL": server.url} for side, env in envs.items()}
        r = results[name] = compare(name, Path(args.before), args.pairs, work, envs_now)
        print(f"{name:<14} {r['before_s']:>9.2f} {r['after_s']:>8.2f} {r['ratio']:>12.3f}", flush=True)
    if server:
        server.stop()
    end_temporary_apis(work / "prefect-home")
    print(json.dumps({"pairs": args.pairs, "load_before": round(load, 2), "before": args.before,
                      "commands": {k: {kk: (round(vv, 3) if isinstance(vv, float) else vv) for kk, vv in v.items()}
                                   for k, v in results.items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
