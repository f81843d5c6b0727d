"""What each runtime piece buys (flows/runtime/): a user's command, run tuned and with the piece
off (EXPRESS_PLAIN=<piece>), in alternating pairs, each run a fresh process into a fresh warehouse.
Prints, per piece, the median wall seconds of both, the median of the pairs' ratios (off / tuned:
1.10 means the piece saves 9 % of the tuned time... of the slower run), and the peak RSS summed over
the command's process tree; then one JSON line.

    .venv/bin/python bench/runtime.py --path demo --pieces each --pairs 4
    .venv/bin/python bench/runtime.py --path build30k --pieces all,openblas --pairs 5
    .venv/bin/python bench/runtime.py --path build1m --pieces dask_no_trim --pairs 3 --workdir /tmp/rt

Paths: `demo` (`express demo`), `build30k`, `build250k` and `build1m` (`express build` of
bench/real_text.py's dump of 30,000, 250,000 or 1,000,000 posts: one shard in the command's process,
or two local workers; a build's peak memory is flat from 250,000 posts on, so `build250k` measures
the memory pieces of the 1M build),
`train` (`express train-acceptance` on the dev file). Every run uses one PREFECT_HOME made before
the first, so each command pays its temporary API's start but not a new database's.
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
from bench.scale import TreeRss  # noqa: E402
from flows.runtime.pieces import PIECES  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
EXPRESS = [sys.executable, "-m", "flows.cli"]
# the pieces that can act on each path (a piece of local workers does nothing in one process)
WORKERS_ONLY = {"dask_quiet", "dask_no_trim"}
TRAIN = {"gc_thresholds", "openblas", "hidden_imports"}


def pieces_for(path: str) -> list[str]:
    if path == "train":
        return [p for p in PIECES if p in TRAIN]
    if path in ("build250k", "build1m"):
        return list(PIECES)
    return [p for p in PIECES if p not in WORKERS_ONLY]


def command(path: str, work: Path, run: int) -> list[str]:
    wh = work / f"wh-{run}"
    if path == "demo":
        return [*EXPRESS, "demo", "--warehouse", str(wh), "--workdir", str(work / "demo-input")]
    if path.startswith("build"):
        return [*EXPRESS, "build", "--input", str(work / path), "--warehouse", str(wh)]
    return [*EXPRESS, "train-acceptance", "--out", str(wh), "--version", "acceptance-bench", "--json"]


def prepare(path: str, work: Path) -> None:
    """The dump a build path reads (kept in the workdir for later calls)."""
    if path.startswith("build"):
        posts = {"build30k": 30_000, "build250k": 250_000, "build1m": 1_000_000}[path]
        write_dump(work / path, RealTextSpec(posts=posts))


def timed(cmd: list[str], plain: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and the peak RSS (MB) summed over the process tree, of one run."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, env={**env, "EXPRESS_PLAIN": plain}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    with TreeRss(proc.pid) as rss:
        _, err = proc.communicate()
    seconds = time.perf_counter() - started
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} (EXPRESS_PLAIN={plain!r}) failed:\n{err[-2000:]}")
    return seconds, rss.peak_mb


def compare(path: str, piece: str, pairs: int, work: Path, env: dict[str, str]) -> dict[str, float]:
    """`pairs` runs tuned and with `piece` off ('1': all), alternating; the first pair warms up."""
    tuned, off, ratios, rss_tuned, rss_off = [], [], [], [], []
    for k in range(pairs + 1):
        a = timed(command(path, work, 2 * k), "", env)
        b = timed(command(path, work, 2 * k + 1), piece, env)
        for wh in (work / f"wh-{2 * k}", work / f"wh-{2 * k + 1}"):
            shutil.rmtree(wh, ignore_errors=True)
        if k:
            tuned.append(a[0]); off.append(b[0]); ratios.append(b[0] / a[0])
            rss_tuned.append(a[1]); rss_off.append(b[1])
    return {"tuned_s": statistics.median(tuned), "off_s": statistics.median(off),
            "ratio": statistics.median(ratios), "ratios": [round(r, 3) for r in ratios],
            "rss_tuned_mb": statistics.median(rss_tuned), "rss_off_mb": statistics.median(rss_off)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    ap.add_argument("--path", choices=("demo", "build30k", "build250k", "build1m", "train"), default="demo")
    ap.add_argument("--pieces", default="all",
                    help="comma-separated: a piece's name, 'all' (EXPRESS_PLAIN=1) or 'each' (every piece that acts on the path)")
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--workdir")
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="express-runtime-"))
    work.mkdir(parents=True, exist_ok=True)
    prepare(args.path, work)
    names = [n for part in args.pieces.split(",") for n in (pieces_for(args.path) if part == "each" else [part])]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_API", "EXPRESS_"))}
    env["PREFECT_HOME"] = str(work / "prefect-home")
    load = os.getloadavg()[0]
    print(f"{args.path}: {args.pairs} pairs a piece (after one warm-up pair); load {load:.1f}; workdir {work}")
    print(f"{'piece':<24} {'tuned s':>8} {'off s':>8} {'off/tuned':>9} {'buys':>6} {'RSS tuned':>10} {'RSS off':>8}")
    results = {}
    for name in names:
        r = compare(args.path, "1" if name == "all" else name, args.pairs, work, env)
        results[name] = r
        print(f"{name:<24} {r['tuned_s']:>8.2f} {r['off_s']:>8.2f} {r['ratio']:>9.3f} "
              f"{1 - 1 / r['ratio']:>6.1%} {r['rss_tuned_mb']:>8.0f}MB {r['rss_off_mb']:>6.0f}MB", flush=True)
    print(json.dumps({"path": args.path, "pairs": args.pairs, "load_before": round(load, 2),
                      "pieces": {k: {kk: (round(vv, 3) if isinstance(vv, float) else vv) for kk, vv in v.items()}
                                 for k, v in results.items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
