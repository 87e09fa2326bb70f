"""Pool a comparison's seeds: per method the mean held-out score with its interval, mean costs, mean curves,
and the paired differences a reader asks about (WMRL - real GRPO, WMRL - world model only, each ablation - WMRL).

Cost ratios are ratios of mean counts (real GRPO's mean real runs over the method's), which reproduce exactly
from the seeds; CPU and wall seconds follow the machine and are reported beside them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from wmrl_agents.bench.evaluate import wmrl_version
from wmrl_agents.compare.accounting import cost_ratios
from wmrl_agents.compare.methods import ABLATIONS, METHODS
from wmrl_agents.compare.presets import ComparePreset
from wmrl_agents.compare.stats import Interval, bootstrap_interval, mean_interval, paired_difference
from wmrl_agents.grpo.config import GRPOConfig

from wmrl_envs.machine import machine_facts

__all__ = ["BUDGET_MATCHED", "COST_KEYS", "differences", "summarize", "summarize_sweep"]

BUDGET_MATCHED = "real_budget_matched"
"""The pseudo-method: real GRPO read at the step where its real runs reached WMRL's."""
COST_KEYS = (
    "real_runs",
    "build_real_runs",
    "real_cpu_s",
    "real_wall_s",
    "world_model_calls",
    "failed_calls",
    "world_model_s",
    "world_model_sandbox_runs",
    "world_model_cpu_s",
    "generation_s",
    "update_s",
    "total_s",
)
CATEGORIES = ("binary", "multiclass", "regression", "other")
SWEPT = ("world_model", "wmrl", "debias_only", "denoise_only")
"""The methods the quality sweep trains (`wmrl_agents.compare.run.SWEEP_METHODS`)."""
SWEEP_REPORTED = ("real", *SWEPT)
"""What the sweep reports per level: real GRPO first (it needs no world model: the same run is the reference at
every level), then the swept methods."""


def summarize(preset: ComparePreset, reports: Sequence[dict[str, Any]], config: GRPOConfig) -> dict[str, Any]:
    """The pooled report of `reports` (one per seed, as `compare_seed` writes them)."""
    if not reports:
        raise ValueError("no seed reports to summarise")
    seeds = [r["seed"] for r in reports]
    scores = _scores(reports)
    methods = {}
    for method in _methods_in_order(reports):
        # A method may have run on only some of the seeds (ablations on fewer): its figures are over those.
        rows = [r["methods"][method] for r in reports if method in r["methods"]]
        methods[method] = {
            "heldout": mean_interval(list(scores[method].values())).to_dict(),
            "heldout_bootstrap": bootstrap_interval(list(scores[method].values())).to_dict(),
            "per_seed": scores[method],
            **{key: _mean(row[key] for row in rows) for key in COST_KEYS},
            "by_category": {c: _mean_of_present(row["by_category"].get(c) for row in rows) for c in CATEGORIES},
            "learning_curve": _mean_curve([row["learning_curve"] for row in rows]),
        }
    if "real" in methods:
        for row in methods.values():
            row["ratios"] = cost_ratios(methods["real"], row)
    budget = [r["real_budget_matched"] for r in reports if r.get("real_budget_matched")]
    budget_row = None
    if budget:
        budget_row = {
            "heldout": mean_interval(list(scores[BUDGET_MATCHED].values())).to_dict(),
            "per_seed": scores[BUDGET_MATCHED],
            "real_runs": _mean(b["real_runs"] for b in budget),
            "budget_real_runs": _mean(b["budget_real_runs"] for b in budget),
            "step": _mean(b["step"] for b in budget),
        }
    return {
        "preset": preset.name,
        "notes": preset.notes,
        "policy": "program",
        "seeds": seeds,
        "eval_k": preset.eval_k,
        "train_tasks": reports[0]["train_tasks"],
        "heldout_tasks": reports[0]["heldout_tasks"],
        "train_config": config.to_dict(),
        "world_model": reports[0]["world_model"],
        "initial": {
            "heldout": mean_interval(list(scores["initial"].values())).to_dict(),
            "per_seed": scores["initial"],
        },
        "methods": methods,
        BUDGET_MATCHED: budget_row,
        "differences": {name: i.to_dict() for name, i in differences(scores).items()},
        "per_seed": {str(r["seed"]): r for r in reports},
        "wmrl_version": wmrl_version(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine_facts(),
    }


def _methods_in_order(reports: Sequence[dict[str, Any]]) -> list[str]:
    """Every method any seed ran: the paper's three first, then the ablations, then any other."""
    order = {m: i for i, m in enumerate(METHODS + ABLATIONS)}
    return sorted({m for r in reports for m in r["methods"]}, key=lambda m: (order.get(m, len(order)), m))


def differences(scores: dict[str, dict[int, float]]) -> dict[str, Interval]:
    """Paired per-seed differences of held-out scores: WMRL against each baseline, each ablation against WMRL."""
    pairs = [("wmrl", "real"), ("wmrl", BUDGET_MATCHED), ("wmrl", "world_model"), ("world_model", "real")]
    pairs += [(ablation, "wmrl") for ablation in ABLATIONS]
    return {f"{a} - {b}": paired_difference(scores[a], scores[b]) for a, b in pairs if a in scores and b in scores}


def _scores(reports: Sequence[dict[str, Any]]) -> dict[str, dict[int, float]]:
    """Held-out avg@K per method (and the untrained policy, and the budget-matched real GRPO) per seed."""
    scores: dict[str, dict[int, float]] = {"initial": {r["seed"]: r["initial"]["avg_at_k"] for r in reports}}
    for report in reports:
        for method, row in report["methods"].items():
            scores.setdefault(method, {})[report["seed"]] = row["heldout_avg_at_k"]
        if report.get("real_budget_matched"):
            scores.setdefault(BUDGET_MATCHED, {})[report["seed"]] = report["real_budget_matched"]["avg_at_k"]
    return scores


def _mean_curve(curves: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Point by point over seeds (every seed evaluates at the same steps): mean real runs, score and interval."""
    pooled = []
    for points in zip(*curves, strict=True):
        score = mean_interval([p["avg_at_k"] for p in points])
        pooled.append(
            {
                "step": points[0]["step"],
                "real_runs": _mean(p["real_runs"] for p in points),
                "avg_at_k": round(score.mean, 4),
                "low": None if score.low is None else round(score.low, 4),
                "high": None if score.high is None else round(score.high, 4),
            }
        )
    return pooled


def _mean(values: Any) -> float:
    xs = [float(v) for v in values]
    return round(math.fsum(xs) / len(xs), 3)


def _mean_of_present(values: Any) -> float | None:
    xs = [float(v) for v in values if v is not None]
    return round(math.fsum(xs) / len(xs), 4) if xs else None


def summarize_sweep(reports: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per quality level, over the seeds that ran it: each method's held-out interval, real runs and world-model
    sandbox runs (the proxy's), and the paired differences that say what carried WMRL there (the main comparison
    is the surrogate as fit). Real GRPO needs no world model: its run is the reference at every level, so WMRL -
    real is paired at each; the untrained policy's score over the swept seeds is the floor."""
    swept = [r for r in reports if r.get("sweep")]
    levels: dict[str, Any] = {}
    if not swept:
        return {"seeds": [], "levels": levels}
    as_fit = any(m in r["methods"] for r in swept for m in SWEPT)
    names = (["surrogate as fit"] if as_fit else []) + list(dict.fromkeys(n for r in swept for n in r["sweep"]))
    for name in names:
        ran = [r for r in swept if name == "surrogate as fit" or name in r["sweep"]]
        scores: dict[str, dict[int, float]] = {}
        runs: dict[str, list[float]] = {}
        wm_runs: dict[str, list[float]] = {}
        for report in ran:
            rows = report["methods"] if name == "surrogate as fit" else report["sweep"][name]["methods"]
            if "real" in report["methods"]:
                rows = {"real": report["methods"]["real"], **rows}
            for method, row in rows.items():
                if method in SWEEP_REPORTED:
                    scores.setdefault(method, {})[report["seed"]] = row["heldout_avg_at_k"]
                    runs.setdefault(method, []).append(row["real_runs"])
                    wm_runs.setdefault(method, []).append(row.get("world_model_sandbox_runs", 0))
        pairs = [
            ("wmrl", "world_model"),
            ("wmrl", "real"),
            ("world_model", "real"),
            ("debias_only", "wmrl"),
            ("denoise_only", "wmrl"),
        ]
        level = {} if name == "surrogate as fit" else ran[0]["sweep"][name]
        levels[name] = {
            "quality": level.get("quality"),
            "world_model": level.get("world_model", "surrogate"),
            "seeds": [r["seed"] for r in ran],
            "methods": {
                m: {
                    "heldout": mean_interval(list(s.values())).to_dict(),
                    "per_seed": s,
                    "real_runs": _mean(runs[m]),
                    "world_model_sandbox_runs": _mean(wm_runs[m]),
                }
                for m, s in scores.items()
            },
            "differences": {
                f"{a} - {b}": paired_difference(scores[a], scores[b]).to_dict()
                for a, b in pairs
                if a in scores and b in scores
            },
        }
    initial = mean_interval([r["initial"]["avg_at_k"] for r in swept]).to_dict()
    return {"seeds": [r["seed"] for r in swept], "initial": initial, "levels": levels}
