"""`express export lm-eval`: a release as an lm-evaluation-harness task folder, so that
`lm_eval --include_path DIR --tasks TASK` scores any model lm-eval can run on the benchmark.

The folder holds the task YAML, utils.py (evaluation/data/lm_eval/) with copies of our parser
and metrics beside it, the decomposition, and the evaluated splits as JSONL: per example its ids,
the masked text, the zero-shot prompt of our prompts file and the gold words. Nothing unmasked is
written. lm-eval's AccL, AccV, F1V and VRate are then those `express score` gives the same answers.
"""
from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from schemas.lexicon import DATA_DIR, data_versions

from evaluation.datafiles import DATA_DIR as EVALUATION_DATA
from evaluation.predictors.base import Item
from evaluation.predictors.prompts import DEFAULT_VARIANT, load_prompts, render_user
from warehouse.ledgers.exports import record_export
from warehouse.layout import Warehouse
from warehouse.releases.release import Release
from warehouse.ledgers.withdrawn import refuse_withdrawn

SCORING = Path(__file__).resolve().parents[1] / "scoring"  # the answer parser and metrics the task folder copies
SPLITS = ("validation", "test")
SETTING = "zero-shot"  # lm-eval shows few-shot examples its own way (--num_fewshot)


@dataclass(frozen=True)
class Export:
    task: str
    path: Path
    rows: dict[str, int]


def task_name(release: Release) -> str:
    return re.sub(r"[^a-z0-9]+", "_", f"express {release.dataset} {release.version}".lower()).strip("_")


def _yaml(task: str, splits: list[str], max_tokens: int, meta: dict[str, str]) -> str:
    test = "test" if "test" in splits else splits[0]
    lines = [f"task: {task}", "custom_dataset: !function utils.load_docs", f"test_split: {test}"]
    if "validation" in splits and test != "validation":
        lines.append("validation_split: validation")
    lines += ["output_type: generate_until", "doc_to_text: !function utils.doc_to_text",
              "doc_to_target: !function utils.doc_to_target", "generation_kwargs:", "  until: []",
              f"  max_gen_toks: {max_tokens}", "  do_sample: false", "  temperature: 0.0",
              "process_results: !function utils.process_results", "metric_list:"]
    for metric in ("AccL", "AccV", "F1V"):
        lines += [f"  - metric: {metric}", "    aggregation: !function utils.share", "    higher_is_better: true"]
    lines += ["  - metric: VRate", "    aggregation: mean", "    higher_is_better: true", "metadata:", "  version: 1.0"]
    lines += [f"  {k}: {json.dumps(v)}" for k, v in meta.items()]
    return "\n".join(lines) + "\n"


def export_lm_eval(warehouse: Warehouse, version: str, out: str | Path, prompts_file: str | None = None,
                   force: bool = False) -> Export:
    """Write the task folder (refusing to overwrite a non-empty folder, and a withdrawn release
    unless `force`, then without its taken-down rows); the folder is recorded as a copy outside."""
    release = Release.find(warehouse, version)
    refuse_withdrawn(release.release_id, release.withdrawn, "export lm-eval", force)
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty; give a new folder")
    prompts = load_prompts(prompts_file)
    setting = prompts.get(SETTING, DEFAULT_VARIANT)
    (out / "data").mkdir(parents=True, exist_ok=True)
    rows: dict[str, int] = {}
    most_masks = 1
    for split in (s for s in SPLITS if s in release.split_files()):
        with open(out / "data" / f"{split}.jsonl", "w", encoding="utf-8") as fh:
            for row in release.rows(split):
                item = Item.from_row(row)
                most_masks = max(most_masks, item.n_masks)
                fh.write(json.dumps({"post_id": item.post_id, "segment_index": item.segment_index,
                                     "masked_text": item.masked_text, "n_masks": item.n_masks,
                                     "prompt": render_user(setting, item.masked_text),
                                     "surfaces": [str(s) for s in row["surfaces"]]}, ensure_ascii=False) + "\n")
                rows[split] = rows.get(split, 0) + 1
    if not rows:
        raise ValueError(f"release {release.dataset}/{release.version} has no validation or test split")
    task = task_name(release)
    meta = {"release": f"{release.dataset}/{release.version}", "prompts": prompts.version, "setting": SETTING,
            "decomposition": data_versions()["decomposition"]["version"]}
    (out / f"{task}.yaml").write_text(_yaml(task, list(rows), setting.answer_budget(most_masks), meta))
    shutil.copy(EVALUATION_DATA / "lm_eval" / "utils.py", out / "utils.py")
    shutil.copy(SCORING / "parsing.py", out / "express_parsing.py")
    shutil.copy(SCORING / "metrics.py", out / "express_metrics.py")
    shutil.copy(DATA_DIR / data_versions()["decomposition"]["file"], out / "decomposition.csv")
    record_export(warehouse, out, "export lm-eval", release.release_id)
    return Export(task, out, rows)
