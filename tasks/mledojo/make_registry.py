"""Regenerate ``registry.yaml`` from the MLE-Dojo / MLE-bench reference tables.

The registry is a derived artefact: the facts come from the reference metadata
(``mledojo_competitions.tsv``: direction from each competition's ``metric.py`` and
Kaggle tags naming the metric; ``mlebench_competitions.tsv``: grader names;
``<comp>/task.json``: columns of the 15 reference competitions; ``paper_split.txt``),
plus the short `CURATED` table below for what the tables get wrong or leave out,
each with its reason. Edit this script, not the YAML, then run::

    python -m wmrl_tasks.mledojo.make_registry --reference-dir ../shared/mledojo-reference
    python -m wmrl_tasks.mledojo.make_registry --reference-dir ... --check   # exit 1 if stale
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from .metadata import METRICS, UNSUPPORTED_PREFIX
from .registry import REGISTRY_PATH
from .schema import REGISTRY_KEYS

__all__ = ["build_entries", "main", "render"]

# Kaggle evaluation tags (last tag of a competition) that name a metric the grader has.
TAG_METRICS = {
    "Area Under Receiver Operating Characteristic Curve": "roc_auc",
    "Roc Auc Score": "roc_auc",
    "Mean Columnwise Area Under Receiver Operating Characteristic Curve": "mean_column_roc_auc",
    "Log Loss": "log_loss",
    "Multiclass Loss": "multiclass_log_loss",
    "Root Mean Squared Error": "rmse",
    "Root Mean Squared Logarithmic Error": "rmsle",
    # MLE-Dojo's metric.py for these takes the square root (playground-series-s4e4), as Kaggle did.
    "Mean Squared Log Error": "rmsle",
    "Mean Columnwise Root Mean Squared Logarithmic Error": "mean_column_rmsle",
    "Mean Absolute Error": "mae",
    "R^2 score (coefficient of determination)": "r2",
    "R2 Score": "r2",
    "QuadraticWeightedKappa": "quadratic_weighted_kappa",
    "Cohen Kappa Score": "quadratic_weighted_kappa",
    "Normalized Gini Index": "normalized_gini",
    "SMAPE": "smape",
    "Categorization Accuracy": "accuracy",
    "Accuracy Score": "accuracy",
    "F-Score (Macro)": "f1_macro",
    "F1 Score": "f1",
    "MAP@{K}": "map_at_k",
}

# MLE-bench grader names (config.yaml) for competitions MLE-Dojo does not list.
GRADER_METRICS = {"auc-roc": "roc_auc", "accuracy": "accuracy"}

TASK_JSON_METRICS = {"mean_columnwise_rmsle": "mean_column_rmsle", "mean_columnwise_roc_auc": "mean_column_roc_auc"}
TASK_TYPE_CATEGORIES = {
    "binary_classification": "binary",
    "multilabel_classification": "binary",
    "multiclass_classification": "multiclass",
    "ordinal_multiclass": "multiclass",
    "regression": "regression",
    "regression_multi_target": "regression",
    "time_series_regression": "regression",
}
# Multilabel tasks are sets of binary targets scored per column (AUC), so they count as binary.
REFINED_CATEGORIES = {
    "binary": "binary",
    "multilabel": "binary",
    "multiclass": "multiclass",
    "regression": "regression",
}

# What the tables get wrong or leave out. Each entry says why in `notes`.
CURATED: dict[str, dict[str, Any]] = {
    # Paper training pool.
    "icr-identify-age-related-conditions": {
        "metric": "unsupported:balanced_log_loss",
        "notes": "Kaggle 'Weighted Multiclass Loss' is a class-balanced log loss over class_0/class_1.",
    },
    "liberty-mutual-group-property-inspection-prediction": {
        "category": "regression",
        "notes": "Predicts the continuous Hazard score; scored by normalized Gini, which only ranks.",
    },
    "walmart-recruiting-store-sales-forecasting": {"notes": "WMAE with holiday weeks weighted 5x."},
    "kaggle-llm-science-exam": {"metric_kwargs": {"k": 3}, "notes": "MAP@3 over space-separated answer letters."},
    "chaii-hindi-and-tamil-question-answering": {"metric": "unsupported:word_level_jaccard"},
    "nbme-score-clinical-patient-notes": {"metric": "unsupported:span_micro_f1"},
    "llm-classification-finetuning": {
        "metric": "multiclass_log_loss",
        "category": "multiclass",
        "target_columns": ["winner_model_a", "winner_model_b", "winner_tie"],
        "notes": "Three-way preference; MLE-Dojo metric.py scores log loss over the three winner columns.",
    },
    "linking-writing-processes-to-writing-quality": {
        "metric": "rmse",
        "category": "regression",
        "target_columns": ["score"],
        "notes": "Kaggle tag says MSE but MLE-Dojo metric.py (and Kaggle) score RMSE of the essay score.",
    },
    "detecting-insults-in-social-commentary": {
        "notes": "Kaggle's submission has no id column (Insult, Date, Comment); check the sample submission."
    },
    "tgs-salt-identification-challenge": {"metric": "unsupported:mean_precision_iou"},
    "global-wheat-detection": {"metric": "unsupported:map_iou_0.5_0.75"},
    "whale-categorization-playground": {"metric_kwargs": {"k": 5}, "notes": "MAP@5 over space-separated whale ids."},
    "plant-seedlings-classification": {
        "metric": "accuracy",
        "target_columns": ["species"],
        "notes": "MLE-Dojo metric.py scores micro-averaged F1, which equals accuracy with one label per row.",
    },
    "shopee-product-matching": {"metric": "unsupported:mean_row_f1"},
    # Paper held-out pool.
    "novozymes-enzyme-stability-prediction": {"metric": "unsupported:spearman"},
    "afsis-soil-properties": {"metric": "unsupported:mean_column_rmse"},
    "AI4Code": {"metric": "unsupported:kendall_tau"},
    "jigsaw-unintended-bias-in-toxicity-classification": {"metric": "unsupported:jigsaw_bias_auc"},
    "quora-insincere-questions-classification": {
        "metric": "f1",
        "id_column": "qid",
        "target_columns": ["prediction"],
        "notes": "Binary F1 (MLE-Dojo metric.py); the answers file names the label 'target', the submission 'prediction'.",
    },
    "uw-madison-gi-tract-image-segmentation": {"metric": "unsupported:dice_3d_hausdorff"},
    "kuzushiji-recognition": {"metric": "unsupported:character_center_f1"},
    "bengaliai-cv19": {"metric": "unsupported:hierarchical_macro_recall"},
    # Outside the paper pool, where the tables are incomplete.
    "playground-series-s3e22": {
        "metric": "accuracy",
        "target_columns": ["outcome"],
        "notes": "MLE-Dojo metric.py scores micro-averaged F1, which equals accuracy with one label per row.",
    },
    "playground-series-s4e4": {"target_columns": ["Rings"]},
    "lmsys-chatbot-arena": {
        "metric": "multiclass_log_loss",
        "category": "multiclass",
        "target_columns": ["winner_model_a", "winner_model_b", "winner_tie"],
        "notes": "Same three-way task as llm-classification-finetuning.",
    },
    "stanford-covid-vaccine": {
        "metric": "unsupported:mean_column_rmse",
        "notes": "MCRMSE over the scored reactivity columns; MLE-bench's grader label says log loss.",
    },
    "playground-series-s3e13": {"metric_kwargs": {"k": 3}},
    "h-and-m-personalized-fashion-recommendations": {"metric_kwargs": {"k": 12}},
    "hotel-id-2021-fgvc8": {"metric_kwargs": {"k": 5}},
    "3d-object-detection-for-autonomous-vehicles": {"higher_is_better": True, "category": "other"},
    "google-research-identify-contrails-reduce-global-warming": {"higher_is_better": True, "category": "other"},
    "rsna-2022-cervical-spine-fracture-detection": {"higher_is_better": False, "category": "other"},
    "rsna-breast-cancer-detection": {"higher_is_better": True, "category": "binary"},
    "siim-isic-melanoma-classification": {"higher_is_better": True, "category": "binary"},
    "tensorflow-speech-recognition-challenge": {"higher_is_better": True, "category": "multiclass"},
    "tensorflow2-question-answering": {"higher_is_better": True, "category": "other"},
}


def build_entries(reference_dir: Path) -> dict[str, dict[str, Any]]:
    """Every competition of the reference tables as a registry entry (plain YAML values)."""
    dojo = _read_tsv(reference_dir / "mledojo_competitions.tsv", "comp")
    bench = _read_tsv(reference_dir / "mlebench_competitions.tsv", "id")
    split = _read_paper_split(reference_dir / "paper_split.txt")
    entries: dict[str, dict[str, Any]] = {}
    for comp_id in sorted(set(dojo) | set(bench), key=str.lower):
        entry = _from_tables(comp_id, dojo.get(comp_id), bench.get(comp_id))
        entry.update(_from_task_json(reference_dir / comp_id, entry))
        entry.update(CURATED.get(comp_id, {}))
        entry["split"] = split.get(comp_id)
        if entry["metric"] == "map_at_k" and "k" not in entry.get("metric_kwargs", {}):
            raise SystemExit(f"{comp_id}: MAP@K needs metric_kwargs.k in CURATED")
        entries[comp_id] = {k: entry[k] for k in REGISTRY_KEYS if entry.get(k) not in (None, {}, "")}
    missing = sorted(set(split) - set(entries))
    if missing:
        raise SystemExit(f"paper_split.txt names competitions missing from the tables: {missing}")
    return entries


def render(entries: dict[str, dict[str, Any]]) -> str:
    """The registry.yaml text for `entries`, with a header that says where it comes from."""
    header = (
        "# Competition registry for wmrl_tasks.mledojo. GENERATED by make_registry.py from the\n"
        "# MLE-Dojo / MLE-bench reference tables: edit that script, not this file.\n"
        "# metric 'unsupported:<name>' records a real metric the grader does not have yet.\n"
        "# split: the WMRL paper's pool (train / held-out); absent = not in the paper's pool.\n"
    )
    body = yaml.safe_dump({"competitions": entries}, sort_keys=False, allow_unicode=True, width=120)
    return header + body


def main(argv: list[str] | None = None) -> int:
    """Write (or, with --check, verify) registry.yaml from the reference metadata."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-dir", type=Path, required=True, help="the mledojo-reference folder")
    parser.add_argument("--output", type=Path, default=REGISTRY_PATH, help="where to write registry.yaml")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file differs from what would be written")
    args = parser.parse_args(argv)
    text = render(build_entries(args.reference_dir))
    if args.check:
        stale = not args.output.exists() or args.output.read_text(encoding="utf-8") != text
        print(f"{args.output} is {'stale: regenerate it' if stale else 'up to date'}")
        return int(stale)
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


def _from_tables(comp_id: str, dojo: dict[str, str] | None, bench: dict[str, str] | None) -> dict[str, Any]:
    if dojo is not None:
        tags = [t for t in dojo["tags"].split("|") if t]
        metric = TAG_METRICS.get(tags[-1]) if tags else None
        if metric is None and bench is not None:
            metric = GRADER_METRICS.get(bench["metric"]) or UNSUPPORTED_PREFIX + _slug(bench["metric"])
        if metric is None:
            metric = UNSUPPORTED_PREFIX + (_slug(tags[-1]) if tags else "unknown")
        category = REFINED_CATEGORIES.get(dojo["refined_type"].rstrip("*"), "other")
        return {"metric": metric, "higher_is_better": dojo["higher_is_better"] == "True", "category": category}
    assert bench is not None
    metric = GRADER_METRICS.get(bench["metric"]) or UNSUPPORTED_PREFIX + _slug(bench["metric"])
    return {"metric": metric, "category": "other"}


def _from_task_json(comp_dir: Path, entry: dict[str, Any]) -> dict[str, Any]:
    path = comp_dir / "task.json"
    if not path.is_file():
        return {}
    task = json.loads(path.read_text(encoding="utf-8"))
    if entry.get("higher_is_better") not in (None, task["higher_is_better"]):
        raise SystemExit(f"{path}: higher_is_better disagrees with mledojo_competitions.tsv")
    facts = {
        "metric": TASK_JSON_METRICS.get(task["metric"], task["metric"]),
        "higher_is_better": task["higher_is_better"],
        "category": TASK_TYPE_CATEGORIES[task["task_type"]],
        "id_column": task["id_column"],
        "target_columns": list(task["target_columns"]),
    }
    meta = comp_dir / "mledojo" / "kaggle_meta.json"
    if meta.is_file():
        facts["title"] = json.loads(meta.read_text(encoding="utf-8"))["title"]
    if facts["metric"] not in METRICS:
        raise SystemExit(f"{path}: metric {task['metric']!r} has no grader key; add it to TASK_JSON_METRICS")
    return facts


def _read_tsv(path: Path, key: str) -> dict[str, dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return {row[key]: row for row in csv.DictReader(fh, delimiter="\t")}


def _read_paper_split(path: Path) -> dict[str, str]:
    split, section = {}, None
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = "train" if line == "[train]" else "held-out"
        elif section is not None:
            split[line] = section
    return split


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9.@]+", "_", name.lower().replace("{", "").replace("}", "")).strip("_")


if __name__ == "__main__":
    sys.exit(main())
