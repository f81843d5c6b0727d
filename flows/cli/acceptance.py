"""`express train-acceptance`: fit the acceptance model on dev gold (and review decisions)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from common.errors import USER_ERROR
from flows.reported import reported

DEFAULT_DEV = Path(__file__).resolve().parents[3] / "shared" / "data" / "express-reference" / "segments_dev.jsonl"


@reported("express-train-acceptance")
def cmd_train(args: argparse.Namespace) -> int:
    from extractors import acceptance_training as tr
    from extractors.acceptance import DATA_DIR, OFF, model_from_dict
    from extractors.disclosures import DisclosureExtractor

    out_dir = Path(args.out) if args.out else DATA_DIR
    try:
        rows, sha = tr.read_dev(args.dev)
        extra = [row for path in args.review or [] for row in tr.read_review(path)]
        version = args.version or tr.next_version(out_dir)
        if (out_dir / f"{version}.json").exists() and not args.force:
            raise FileExistsError(f"{out_dir / f'{version}.json'} exists: give a new --version (or --force)")
    except (tr.TrainingDataError, FileNotFoundError, FileExistsError) as exc:
        print(f"express train-acceptance: {exc}", file=sys.stderr)
        return USER_ERROR
    extractor = DisclosureExtractor(acceptance=OFF)  # the rules alone: every hit is a candidate
    ts = tr.labelled_hits(rows, extractor, sha, str(args.dev))
    ts.extra.extend(extra)
    folds = tr.cross_fold(ts)
    data = tr.train(ts, version, folds=folds)
    path = tr.write_model(data, out_dir, force=args.force)
    model = model_from_dict(data)
    if args.json:
        print(json.dumps({"model": str(path), "version": version, "threshold": model.threshold,
                          "C": data["C"], "folds": folds}))
        return 0
    print(f"trained {version} on {ts.rows} rows ({len(ts.hits)} hits, {ts.gold_spans} gold spans, "
          f"{len(extra)} review rows); C={data['C']}, threshold {model.threshold:.3f}")
    for name, f in folds.items():
        r, m = f["rules"], f["with_model"]
        print(f"  {name:<16} rules P {r['precision']:.3f} R {r['recall']:.3f}  "
              f"-> with model P {m['precision']:.3f} R {m['recall']:.3f}")
    keep, drop = model.top_weights(8)
    print("  most for keeping:  " + ", ".join(f"{k} {w:+.2f}" for k, w in keep))
    print("  most for dropping: " + ", ".join(f"{k} {w:+.2f}" for k, w in drop))
    print(path)
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("train-acceptance", help="train the acceptance model on dev gold (and review decisions)")
    p.add_argument("--dev", type=Path, default=DEFAULT_DEV, help="segments_dev.jsonl (default: ../shared)")
    p.add_argument("--review", action="append", metavar="FILE",
                   help='review decisions, JSONL of {"features": [...], "accepted": bool} (repeatable)')
    p.add_argument("--version", help="model version (default: the next acceptance-vN in --out)")
    p.add_argument("--out", help="directory for the model file and acceptance.toml (default: extractors/data)")
    p.add_argument("--force", action="store_true", help="replace an existing model file of that version")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the summary")
    p.set_defaults(func=cmd_train)
