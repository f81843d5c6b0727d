"""`express vocab` (labels, variant counts, version) and `express vocab check` (validate a file)."""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from common.errors import USER_ERROR
from flows.reported import reported


def cmd_vocab(args: argparse.Namespace) -> int:
    from schemas.vocabulary import Vocabulary, VocabularyError

    try:
        vocab = Vocabulary.load(args.file)
    except (VocabularyError, FileNotFoundError) as exc:
        print(f"express vocab: {exc}", file=sys.stderr)
        return USER_ERROR
    entries = list(vocab.entries.values())
    excluded = sorted((e for e in entries if e.excluded), key=lambda e: e.surface)
    kinds = Counter(e.kind for e in entries if not e.excluded)
    print(f"vocabulary {vocab.version}  sha256 {vocab.sha256[:12]}  {vocab.path}")
    print(f"strings: {len(entries)} = mapped {len(entries) - len(excluded)} + excluded {len(excluded)}")
    print("kinds of mapped strings: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    print(f"canonical labels: {len(vocab.labels)}")
    print()
    print("label\tvariants\tforms")
    for label in vocab.labels:
        forms = [s for s in vocab.variants(label) if s != label]
        print(f"{label}\t{len(forms)}\t{', '.join(forms)}")
    fallback = vocab.fallback_vectors()
    print()
    print(f"{len(fallback)} mapped forms are not in the decomposition and use their label's vector: "
          + ", ".join(fallback))
    print(f"excluded ({len(excluded)}):")
    for e in excluded:
        print(f"  {e.surface}\t{e.reason}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from common.checksums import sha256_file
    from schemas.vocabulary import VocabularyError, declared_version, default_path
    from schemas.vocabulary.check import check_file

    given = args.check_file or args.file
    file = Path(given) if given else default_path()
    try:
        problems = check_file(file)
    except (VocabularyError, FileNotFoundError) as exc:
        print(f"express vocab check: {exc}", file=sys.stderr)
        return USER_ERROR
    lines = [p.format(file) for p in problems]
    if given is None and sha256_file(file) != declared_version()["sha256"]:
        lines.append(f"{file}: sha256 differs from version.toml; give the changed file a new version")
    for line in lines:
        print(line)
    if lines:
        print(f"express vocab check: {len(lines)} problem(s) in {file}", file=sys.stderr)
        return USER_ERROR
    print(f"ok: {file}", file=sys.stderr)
    return 0


@reported("express-vocab-score")
def cmd_score(args: argparse.Namespace) -> int:
    from evaluation.scoring.canonical import canonical_scores
    from evaluation.scoring.metrics import express_scores
    from evaluation.scoring.parsing import parse_answer
    from evaluation.scoring.score_file import read_predictions
    from schemas.lexicon import default_decomposition
    from schemas.vocabulary import Vocabulary, VocabularyError

    try:
        vocab = Vocabulary.load(args.file)
        pairs = [(g, parse_answer(o)) for g, o in read_predictions(args.predictions, args.labels_field, args.output_field)]
    except (VocabularyError, ValueError, FileNotFoundError) as exc:
        print(f"express vocab score: {exc}", file=sys.stderr)
        return USER_ERROR
    surface = express_scores(pairs, default_decomposition())
    print(json.dumps({"AccL": surface["AccL"], **canonical_scores(pairs, vocab)}))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("vocab", help="the canonical emotion vocabulary: labels, variant counts, version")
    p.add_argument("--file", help="vocabulary TSV (default: the shipped one)")
    p.set_defaults(func=cmd_vocab)
    vsub = p.add_subparsers(dest="vocab_command")
    c = vsub.add_parser("check", help="validate a vocabulary file; non-zero exit listing offending rows")
    c.add_argument("--file", dest="check_file",
                   help="vocabulary TSV (default: the shipped one, also checked against its version)")
    c.set_defaults(func=cmd_check)
    s = vsub.add_parser("score", help="AccL (surface words) and AccC (canonical labels) of a predictions file")
    s.add_argument("--predictions", required=True, help="JSONL or CSV, as `express score` reads it")
    s.add_argument("--labels-field", help="field of the gold words (default: surfaces, else labels)")
    s.add_argument("--output-field", default="output", help="field holding the raw model answer")
    s.set_defaults(func=cmd_score)
