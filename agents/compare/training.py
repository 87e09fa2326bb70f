"""Train one method of a comparison, evaluating the held-out split as it learns.

The learning curve is what tells a real gain from a lucky end point: held-out avg@K after every few steps,
against the real runs spent so far (the world model's build counts from the start, so a world-model method's
curve begins to the right of real GRPO's). ``stop_at_runs`` adds the budget-matched point: the policy as it
stood after the first step at which its real runs reached that budget (real GRPO stopped where WMRL stopped).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wmrl_agents.compare.accounting import MeteredExecutor, SandboxSpend
from wmrl_agents.compare.methods import USES_WORLD_MODEL, config_for, reward_source_for
from wmrl_agents.compare.world_model import BuiltWorldModel
from wmrl_agents.grpo.config import GRPOConfig
from wmrl_agents.grpo.trainer import GRPOTrainer
from wmrl_agents.policies.factory import make_policy
from wmrl_agents.policy import Policy

from wmrl_envs.competition import Competition
from wmrl_envs.sandbox.base import Executor

__all__ = ["POLICY", "TrainedMethod", "curve_steps", "train_method"]

POLICY = "program"
Evaluate = Callable[[Policy, str], dict[str, Any]]


@dataclass
class TrainedMethod:
    """A trained method's step log, ledger, sandbox spend, held-out curve and (when asked) budget-matched point."""

    records: list[dict[str, Any]]
    ledger: dict[str, Any]
    spend: SandboxSpend
    curve: list[dict[str, Any]] = field(default_factory=list)
    world_model_spend: SandboxSpend = field(default_factory=SandboxSpend)
    """Sandbox runs the world model itself made while the method trained (the proxy's; none for a surrogate)."""
    final: dict[str, Any] | None = None
    budget_matched: dict[str, Any] | None = None


def curve_steps(steps: int, every: int) -> list[int]:
    """The steps after which the held-out split is evaluated: every `every` steps, and always the last."""
    if every < 1:
        raise ValueError(f"curve_every must be at least 1, got {every}")
    return sorted({*range(every, steps + 1, every), steps})


def train_method(
    method: str,
    config: GRPOConfig,
    train_tasks: Sequence[Competition],
    built: BuiltWorldModel | None,
    sandbox: Executor,
    run_dir: Path,
    evaluate: Evaluate,
    *,
    curve_every: int,
    stop_at_runs: int | None = None,
    show: bool = True,
) -> TrainedMethod:
    """Train `method` from the untrained policy of `config.seed`, evaluating at `curve_steps` (and `stop_at_runs`).

    Real runs are counted at `sandbox` (wrapped here); a world-model method's count starts at its build's runs. A
    world model that runs code itself (the proxy) runs it through its own meter on `sandbox`, counted apart.
    """
    charged = built is not None and method in USES_WORLD_MODEL
    metered, predicting = MeteredExecutor(sandbox), MeteredExecutor(sandbox)
    predictor = built.predictor_through(predicting) if charged else None
    build_runs = built.real_runs if charged else 0
    for stale in ("steps.jsonl", "summary.json", "checkpoints"):  # a previous comparison's steps would append
        path = run_dir / stale
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    source = reward_source_for(method, config, predictor, executor=metered)
    policy = make_policy(POLICY, seed=config.seed)
    trainer = GRPOTrainer(policy, config_for(method, config), run_dir, reward_source=source, competitions=train_tasks)
    wanted = set(curve_steps(config.steps, curve_every))
    trained = TrainedMethod([], {}, SandboxSpend())
    while trainer.step < config.steps:
        record = trainer.train_step()
        if show:
            trainer.log.show(record, config.steps)
        if trainer.step % config.checkpoint_every == 0 or trainer.step == config.steps:
            trainer.save()
        runs = build_runs + trainer.ledger.real_runs
        point = None
        if trainer.step in wanted:
            point = _point(trainer.step, runs, evaluate(policy, f"{method} step {trainer.step}"))
            trained.curve.append(point)
        if stop_at_runs is not None and trained.budget_matched is None and runs >= stop_at_runs:
            point = point or _point(trainer.step, runs, evaluate(policy, f"{method} at {stop_at_runs} real runs"))
            trained.budget_matched = point
    trainer.train(show=False)  # nothing left to run: writes summary.json
    trained.records = trainer.log.read()
    trained.ledger = trainer.ledger.to_dict()
    trained.spend = metered.spent()
    trained.world_model_spend = predicting.spent()
    trained.final = trained.curve[-1] if trained.curve else None
    if stop_at_runs is not None and trained.budget_matched is None:
        trained.budget_matched = trained.final  # the whole run spent less than the budget
    return trained


def _point(step: int, runs: int, heldout: dict[str, Any]) -> dict[str, Any]:
    return {"step": step, "real_runs": runs, "avg_at_k": heldout["avg_at_k"], "heldout": heldout}
