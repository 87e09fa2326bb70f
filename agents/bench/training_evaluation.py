"""The code-task family's evaluation during training: held-out avg@k of the policy, through `wmrl_agents.bench`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wmrl_envs import console

__all__ = ["held_out_evaluator"]


def held_out_evaluator(config: Any, executor: Any) -> Callable[[Any, str], dict[str, Any]]:
    """``evaluate(policy, when)``: avg@``config.eval_k`` on the held-out split, run through `executor`."""
    from wmrl_agents.bench.evaluate import evaluate_policy
    from wmrl_agents.grpo.sources import limits_of
    from wmrl_tasks.mledojo.catalog import load_competitions

    competitions = load_competitions("held-out", config.data_root)

    def evaluate(policy: Any, when: str) -> dict[str, Any]:
        console.note(f"held-out evaluation ({when} training): avg@{config.eval_k} on {len(competitions)} tasks")
        result = evaluate_policy(
            policy,
            competitions,
            k=config.eval_k,
            seed=config.seed,
            executor=executor,
            limits=limits_of(config),
            workers=config.workers,
            max_turns=config.max_turns,
        )
        return {"overall_avg_at_k": result.overall_avg_at_k, "k": config.eval_k, "by_category": result.by_category}

    return evaluate
