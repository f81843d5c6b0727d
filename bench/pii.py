"""The PII scrubber measured: recall per kind and trap survival on data nobody here wrote
(../shared/data/external/pii_external.jsonl) and on our own table (tests/filters/data/pii_table.tsv),
names on and off; and its cost per post on real Reddit text, names on and off.

Recall on the external set is counted two ways: `replaced` (the issue's measure: the value no
longer appears verbatim in the scrubbed text) and `strict` (every letter and digit of the value
lies inside a replaced span). A trap is kept when it still appears in the scrubbed text. The
external file is only measured, never fitted on (its README); `--show N` prints N misses per kind.

Cost: posts of 100-300 words are built at run time from the sentences of
../shared/data/express-reference/segments_dev.jsonl (never written anywhere), 8 % of them with a
disclosing sentence; the build's per-post work on them (the filter chain, scrubbing what it keeps,
extraction of the scrubbed candidates) is timed in CPU seconds, names on and off, and so is the
scrubber alone on the candidates. `--presidio` also scores Presidio's defaults (its predefined
recognizers, our spaCy model, offline) on the external set.

Usage: python bench/pii.py [--posts 2000] [--show 0] [--presidio] [--external PATH] [--dev PATH]
Prints figures, then one JSON line.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from privacy.scrubber import KINDS, Scrubber  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
EXTERNAL_KIND = {"PERSON": "name", "PHONE": "phone", "CREDIT_CARD": "card", "ADDRESS": "address", "EMAIL": "email",
                 "URL": "url", "IP": "ip", "IBAN": "iban", "SSN": "ssn", "HANDLE": "user", "OTHER": "dob"}
TARGETS = {"all": 0.95, "PERSON": 0.90, "PHONE": 0.90, "CREDIT_CARD": 0.90, "ADDRESS": 0.90, "traps": 0.95}


def covered(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    """Is every letter and digit of text[start:end] inside a span?"""
    return all(any(a <= i < b for a, b in spans) for i in range(start, end) if text[i].isalnum())


def score_external(rows: list[dict], outputs: list[str], spans: list[list[tuple[int, int]]], show: int) -> dict:
    total, replaced, strict, misses = Counter(), Counter(), Counter(), defaultdict(list)
    for row, out, found in zip(rows, outputs, spans):
        for p in row["pii"]:
            total[p["type"]] += 1
            gone = p["value"] not in out
            replaced[p["type"]] += gone
            strict[p["type"]] += covered(row["text"], p["start"], p["end"], found)
            if not gone and len(misses[p["type"]]) < show:
                misses[p["type"]].append(p["value"])
    traps = [(t, kind) for row in rows for t, kind in zip(row["traps"], row["trap_source_types"])]
    kept = [t in out for row, out in zip(rows, outputs) for t in row["traps"]]
    lost = Counter(kind for (_, kind), k in zip(traps, kept) if not k)
    per = {k: {"values": n, "replaced": round(replaced[k] / n, 3), "strict": round(strict[k] / n, 3)} for k, n in
           sorted(total.items(), key=lambda kv: -kv[1])}
    n = sum(total.values())
    out = {"values": n, "replaced": round(sum(replaced.values()) / n, 3), "strict": round(sum(strict.values()) / n, 3),
           "per_kind": per, "traps": len(kept), "traps_kept": round(sum(kept) / len(kept), 3),
           "traps_lost_by_type": dict(lost)}
    if show:
        out["misses"] = {k: v for k, v in misses.items()}
        out["traps_lost"] = [t for (t, _), k in zip(traps, kept) if not k][:show]
    return out


def run_ours(scrubber: Scrubber, texts: list[str]) -> tuple[list[str], list[list[tuple[int, int]]]]:
    done = scrubber.settled_found(texts)
    return [t for t, _ in done], [[(s.start, s.end) for s in found] for _, found in done]


def run_presidio(texts: list[str]) -> tuple[list[str], list[list[tuple[int, int]]]]:
    """Presidio's analyzer with its predefined recognizers and our spaCy model; the e-mail
    recognizer's tldextract is pointed at the bundled suffix list (no network)."""
    import tldextract
    from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
    from presidio_analyzer.nlp_engine import SpacyNlpEngine
    from presidio_anonymizer import AnonymizerEngine

    from common.spacy_model import MODEL, import_spacy
    from privacy.recognizers import suffix_extractor

    tldextract.extract = suffix_extractor()
    engine = SpacyNlpEngine(models=[{"lang_code": "en", "model_name": MODEL}])
    engine.nlp = {"en": import_spacy().load(MODEL)}  # the whole pipeline: Presidio's context words read lemmas
    registry = RecognizerRegistry()
    registry.load_predefined_recognizers(languages=["en"], nlp_engine=engine)
    analyzer = AnalyzerEngine(registry=registry, nlp_engine=engine, supported_languages=["en"])
    anonymizer = AnonymizerEngine()
    outputs, spans = [], []
    for text in texts:
        results = analyzer.analyze(text, "en")
        outputs.append(anonymizer.anonymize(text, results).text)
        spans.append([(r.start, r.end) for r in results])
    return outputs, spans


def score_table(scrubber: Scrubber) -> dict:
    from tests.filters.pii_table import load_table

    rows = load_table()
    outputs, spans = run_ours(scrubber, [t for t, _, _ in rows])
    total, caught = Counter(), Counter()
    for (text, pairs, _), found in zip(rows, spans):
        for kind, value in pairs:
            at = text.index(value)
            total[kind] += 1
            caught[kind] += covered(text, at, at + len(value), found)
    kept = [v in out for (_, _, keep), out in zip(rows, outputs) for v in keep]
    structured = sum(total[k] - caught[k] for k in total if k != "name")
    return {"sentences": len(rows), "structured_leaks": structured, "structured_values": sum(total.values()) - total["name"],
            "names_recall": round(caught["name"] / total["name"], 3) if total["name"] else None,
            "traps_kept": round(sum(kept) / len(kept), 3), "traps": len(kept)}


def real_posts(dev: Path, n: int, seed: int = 11) -> list[str]:
    """n posts of 100-300 words from the dev file's sentences; 8 % hold one disclosing sentence.
    The other sentences are ones the disclosure prefilter passes over, so about 8 % of the posts
    are candidates, as on Reddit (docs/sources-and-filters.md: fewer than one post in ten)."""
    from extractors.disclosures import maskable_terms
    from extractors.prefilter import Prefilter

    selects = Prefilter(maskable_terms()).selects
    plain, disclosing = [], []
    for line in dev.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        text, gold = row["text"], row["gold_spans"]
        for m in re.finditer(r"[^.!?\n]+[.!?]*", text):
            sentence = m.group().strip()
            if len(sentence.split()) < 3:
                continue
            if any(m.start() <= g["start"] < m.end() for g in gold):
                disclosing.append(sentence)
            elif not selects(sentence):
                plain.append(sentence)
    rng = random.Random(seed)
    posts = []
    for _ in range(n):
        target, words, parts = rng.randint(100, 300), 0, []
        if rng.random() < 0.08:
            parts.append(rng.choice(disclosing))
            words = len(parts[0].split())
        while words < target:
            parts.append(rng.choice(plain))
            words += len(parts[-1].split())
        rng.shuffle(parts)
        posts.append(" ".join(parts))
    return posts


def cost(posts: list[str]) -> dict:
    """CPU microseconds per post of the build's per-post work and of the scrubber alone, names on
    and off; models are loaded, and every recognizer compiled, before the clocks start."""
    from extractors.disclosures import DisclosureExtractor
    from pipeline.filter_shards import filter_chain, scrubbed
    from schemas.config import Recipe
    from schemas.funnel import Funnel
    from schemas.records import RawPost
    from filters.base import run_filters

    records = [RawPost(id=str(i), title="", selftext=p, text=p, author="someone") for i, p in enumerate(posts)]
    chain, _ = filter_chain(Recipe())
    extractor = DisclosureExtractor()
    candidates = list(run_filters(iter(records), chain, Funnel()))
    out = {"posts": len(posts), "candidates": len(candidates),
           "words_per_post": round(sum(len(p.split()) for p in posts) / len(posts), 1)}
    for label, kinds in (("names_off", tuple(k for k in KINDS if k != "name")), ("names_on", KINDS)):
        alone, step = Scrubber(kinds), Scrubber(kinds)  # two: the name detector remembers what it tagged
        for scrubber in (alone, step):  # warm-up: every recognizer compiled, every model loaded
            list(extractor.extract_many([p.text for p in scrubber.scrub_posts(records[-16:])]))
        t0 = time.process_time()
        alone.scrub_posts(candidates)
        t1 = time.process_time()
        kept = list(scrubbed(run_filters(iter(records), chain, Funnel()), step))
        t2 = time.process_time()
        list(extractor.extract_many([p.text for p in kept]))
        t3 = time.process_time()
        out[f"scrub_us_per_candidate_{label}"] = round((t1 - t0) / max(1, len(candidates)) * 1e6)
        out[f"filter_step_us_per_post_{label}"] = round((t2 - t1) / len(posts) * 1e6, 1)
        out[f"filter_and_extract_us_per_post_{label}"] = round((t3 - t1) / len(posts) * 1e6, 1)
    for what in ("filter_step", "filter_and_extract"):
        out[f"{what}_names_on_over_off"] = round(out[f"{what}_us_per_post_names_on"] / out[f"{what}_us_per_post_names_off"], 2)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False)
    ap.add_argument("--external", default=str(SHARED / "external" / "pii_external.jsonl"))
    ap.add_argument("--dev", default=str(SHARED / "express-reference" / "segments_dev.jsonl"))
    ap.add_argument("--posts", type=int, default=2000, help="real-text posts for the cost (0: skip it)")
    ap.add_argument("--show", type=int, default=0, help="misses printed per kind")
    ap.add_argument("--presidio", action="store_true", help="also score Presidio's defaults on the external set")
    args = ap.parse_args()
    result: dict = {"bench": "pii"}
    on, off = Scrubber(KINDS), Scrubber(tuple(k for k in KINDS if k != "name"))
    external = Path(args.external)
    if external.exists():
        rows = [json.loads(line) for line in external.read_text(encoding="utf-8").splitlines() if line.strip()]
        texts = [r["text"] for r in rows]
        result["external"] = {"names_on": score_external(rows, *run_ours(on, texts), args.show),
                              "names_off": score_external(rows, *run_ours(off, texts), 0)}
        if args.presidio:
            result["external"]["presidio_defaults"] = score_external(rows, *run_presidio(texts), 0)
        for label, ext in result["external"].items():
            per = ", ".join(f"{k} {v['replaced']:.3f}/{v['strict']:.3f}" for k, v in ext["per_kind"].items())
            print(f"external set, {label}: all {ext['values']} values replaced {ext['replaced']:.3f} (strict "
                  f"{ext['strict']:.3f}); traps kept {ext['traps_kept']:.3f} of {ext['traps']}\n  per kind "
                  f"(replaced/strict): {per}\n  traps lost by type: {ext['traps_lost_by_type']}")
        for kind, values in result["external"]["names_on"].get("misses", {}).items():
            print(f"  missed {kind}: {values}")
        if args.show:
            print(f"  traps lost: {result['external']['names_on']['traps_lost']}")
    else:
        print(f"external set {external} not found: skipped")
    result["table"] = {"names_on": score_table(on), "names_off": score_table(off)}
    for label, t in result["table"].items():
        print(f"our table, {label}: {t['sentences']} sentences, structured leaks {t['structured_leaks']} of "
              f"{t['structured_values']}, names recall {t['names_recall']}, traps kept {t['traps_kept']} of {t['traps']}")
    dev = Path(args.dev)
    if args.posts and dev.exists():
        result["cost"] = c = cost(real_posts(dev, args.posts))
        print(f"cost on {c['posts']} real-text posts ({c['words_per_post']} words, {c['candidates']} candidates), "
              f"CPU us: scrubber per candidate names off {c['scrub_us_per_candidate_names_off']:,} / on "
              f"{c['scrub_us_per_candidate_names_on']:,}; filter step per post off {c['filter_step_us_per_post_names_off']} / "
              f"on {c['filter_step_us_per_post_names_on']} ({c['filter_step_names_on_over_off']}x); filter + extract per "
              f"post off {c['filter_and_extract_us_per_post_names_off']} / on {c['filter_and_extract_us_per_post_names_on']} "
              f"({c['filter_and_extract_names_on_over_off']}x)")
    elif args.posts:
        print(f"dev file {dev} not found: the cost on real text is skipped")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
