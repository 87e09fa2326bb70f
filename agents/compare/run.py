"""Run a comparison: train every method from the same policy seed, evaluate each on the held-out split.

Held-out evaluation is identical for every method (same tasks, K and seeds) and is not
training compute; everything a method spent to train, including building its world
model, is.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wmrl_agents.bench.evaluate import evaluate_policy, wmrl_version
from wmrl_agents.compare.methods import USES_WORLD_MODEL, config_for, reward_source_for
from wmrl_agents.compare.presets import ComparePreset
from wmrl_agents.compare.world_model import BuiltWorldModel, build_world_model
from wmrl_agents.grpo.sources import executor_of, limits_of
from wmrl_agents.grpo.trainer import GRPOTrainer
from wmrl_agents.policies.factory import make_policy
from wmrl_tasks.mledojo.catalog import load_competitions

from wmrl_envs import console
from wmrl_envs.competition import Competition

__all__ = ["run_compare"]

POLICY = "program"


def run_compare(
    preset: ComparePreset,
    methods: Sequence[str],
    out_dir: Path,
    *,
    world_model: str = "surrogate",
    seed: int = 0,
    executor: str | None = None,
    ray: dict[str, Any] | None = None,
    workers: int | None = None,
    data_root: str | None = None,
    show: bool = True,
) -> dict[str, Any]:
    """Train and evaluate each of `methods`; returns the comparison as a JSON-able dict (also the run folder's).

    `ray` holds `RayOptions` fields for ``executor="ray"``. Every real run of the comparison (evaluations, the
    world model's build, each method's training) goes through one executor, so a Ray cluster has one pool.
    """
    began = time.perf_counter()
    changes: dict[str, Any] = {"seed": seed, "data_root": data_root}
    if executor is not None:
        changes["executor"] = executor
    if ray:
        changes["ray"] = ray
    if workers is not None:
        changes["workers"] = workers
    config = preset.train.replace(**changes)
    sandbox = executor_of(config)
    try:
        return _compare(preset, methods, out_dir, config, world_model, sandbox, show, began)
    finally:
        close = getattr(sandbox, "close", None)
        if callable(close):
            close()


def _compare(
    preset: ComparePreset,
    methods: Sequence[str],
    out_dir: Path,
    config: Any,
    world_model: str,
    sandbox: Any,
    show: bool,
    began: float,
) -> dict[str, Any]:
    seed, data_root = config.seed, config.data_root
    train_tasks = load_competitions("train", data_root)
    heldout = load_competitions("held-out", data_root)

    def evaluate(policy: Any, label: str) -> dict[str, Any]:
        result = evaluate_policy(
            policy,
            heldout,
            k=preset.eval_k,
            seed=seed,
            executor=sandbox,
            limits=limits_of(config),
            workers=config.workers,
            label=label,
        )
        data = result.to_dict()
        return {
            "avg_at_k": result.overall_avg_at_k,
            "by_category": result.by_category,
            "summary": data["summary"],
            "eval_real_exec_s": data["meta"]["real_exec_s"],
            "infra_errors": data["meta"]["infra_errors"],
        }

    console.note(f"compare {preset.name}: held-out avg@{preset.eval_k} of the untrained {POLICY} policy")
    initial = evaluate(make_policy(POLICY, seed=seed), f"{POLICY} (untrained)")
    built: BuiltWorldModel | None = None
    if USES_WORLD_MODEL.intersection(methods):
        console.note(f"building the {world_model} world model on the training tasks")
        built = build_world_model(
            world_model, config, train_tasks, out_dir, preset.world_model_samples_per_task, executor=sandbox
        )
    results = {}
    for method in methods:
        console.note(f"training with {method}")
        row = _train_and_evaluate(method, config, train_tasks, built, sandbox, out_dir / method, evaluate, show)
        if preset.eval_k == 8:
            row["heldout_avg_at_8"] = row["heldout_avg_at_k"]
        results[method] = row
    report = {
        "preset": preset.name,
        "notes": preset.notes,
        "policy": POLICY,
        "seed": seed,
        "eval_k": preset.eval_k,
        "train_tasks": [c.id for c in train_tasks],
        "heldout_tasks": [c.id for c in heldout],
        "train_config": config.to_dict(),
        "world_model": None if built is None else built.to_dict(),
        "initial": initial,
        "methods": results,
        "ratios": _ratios(results),
        "wmrl_version": wmrl_version(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": _cpus(), "python": platform.python_version()},
        "elapsed_s": round(time.perf_counter() - began, 1),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "compare.json").write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    return report


def _train_and_evaluate(
    method: str,
    config: Any,
    train_tasks: list[Competition],
    built: BuiltWorldModel | None,
    sandbox: Any,
    run_dir: Path,
    evaluate: Any,
    show: bool,
) -> dict[str, Any]:
    predictor = built.predictor if built is not None and method in USES_WORLD_MODEL else None
    source = reward_source_for(method, config, predictor, executor=sandbox)
    policy = make_policy(POLICY, seed=config.seed)
    trainer = GRPOTrainer(policy, config_for(method, config), run_dir, reward_source=source, competitions=train_tasks)
    trainer.train(show=show)
    ledger = trainer.ledger.to_dict()
    charged = built is not None and method in USES_WORLD_MODEL
    real_s = ledger["real_execution_s"] + (built.real_execution_s if charged else 0.0)
    world_model_s = ledger["world_model_s"] + (built.fit_s if charged else 0.0)
    heldout = evaluate(policy, method)
    return {
        "real_exec_s": round(real_s, 3),
        "real_runs": ledger["real_runs"] + (built.real_runs if charged else 0),
        "world_model_s": round(world_model_s, 3),
        "world_model_predictions": ledger["world_model_predictions"],
        "generation_s": round(ledger["generation_s"], 3),
        "update_s": round(ledger["update_s"], 3),
        "total_s": round(real_s + world_model_s + ledger["generation_s"] + ledger["update_s"], 3),
        "world_model_build_real_s": round(built.real_execution_s, 3) if charged else 0.0,
        "heldout_avg_at_k": heldout["avg_at_k"],
        "by_category": heldout["by_category"],
        "heldout": heldout,
        "curve": _curve(trainer.log.read()),
        "run_dir": str(run_dir),
    }


def _curve(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per step: real-execution seconds so far, mean training reward, and what the corrections did.

    The corrections' fields are None for a method without them: anchor pairs so far, whether the map is fitted,
    the out-of-sample residual variance, the anchor weight, the realised and target anchor fractions, and the
    fallback state; ``groups_with_spread`` counts the step's groups whose rewards differ (a learning policy).
    """
    curve = []
    for record in records:
        corrections = record.get("corrections") or {}
        rewards = record["rewards"]
        curve.append(
            {
                "step": record["step"],
                "real_exec_s": record["compute"]["total"]["real_execution_s"],
                "reward_mean": rewards.get("reward_mean"),
                "groups_with_spread": rewards.get("groups_with_spread"),
                "groups": len(record.get("groups") or []),
                "anchor_pairs": corrections.get("n_pairs"),
                "step_anchor_pairs": corrections.get("step_anchor_pairs"),
                "calibrated": corrections.get("calibrated"),
                "residual_variance": corrections.get("residual_variance"),
                "anchor_weight": corrections.get("anchor_weight"),
                "world_model_weight": corrections.get("world_model_weight"),
                "anchor_fraction": corrections.get("anchor_fraction"),
                "realized_anchor_fraction": corrections.get("realized_anchor_fraction"),
                "fallback_state": corrections.get("fallback_state"),
                "failing": corrections.get("failing"),
                "grad_norm": (record.get("update") or {}).get("grad_norm"),
                "ppi_lambda": (record.get("update") or {}).get("ppi_lambda"),
            }
        )
    return curve


def _ratios(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Real GRPO's compute over each method's: real execution and total (the paper's "x less compute")."""
    if "real" not in results:
        return {}
    base = results["real"]
    return {
        method: {
            "real_exec": _ratio(base["real_exec_s"], row["real_exec_s"]),
            "total": _ratio(base["total_s"], row["total_s"]),
        }
        for method, row in results.items()
    }


def _ratio(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 3) if denominator > 0 else None


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
