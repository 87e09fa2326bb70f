"""LIBERO's evaluation during training: success rate avg@k from all 50 initial states (LIBERO's protocol)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wmrl_envs import console

__all__ = ["success_evaluator"]


def success_evaluator(config: Any, executor: Any = None) -> Callable[[Any, str], dict[str, Any]]:
    """``evaluate(policy, when)``: avg@``config.eval_k`` success on the trained tasks (`executor` does not apply)."""
    from wmrl_agents.libero.evaluate import evaluate_vla

    s = config.libero

    def evaluate(policy: Any, when: str) -> dict[str, Any]:
        console.note(f"LIBERO evaluation ({when} training): avg@{config.eval_k} over 50 initial states per task")
        result = evaluate_vla(
            policy,
            policy_spec=policy.name,
            suite=s.suite,
            task_ids=s.task_ids,
            k=config.eval_k,
            seed=config.seed,
            horizon=s.horizon,
            image_size=s.image_size,
            cameras=s.cameras,
            parallel_envs=s.parallel_envs,
            assets_dir=s.assets_dir,
        )
        by_task = {t.task: t.avg_at_k for t in result.tasks}
        return {"overall_avg_at_k": result.avg_at_k, "k": config.eval_k, "by_task": by_task}

    return evaluate
