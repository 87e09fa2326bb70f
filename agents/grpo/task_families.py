"""Task families the trainer can roll out, registered by name: the trainer looks a family up, never branches on it.

A family names, as ``module:attribute`` strings (imported on first use, so a code-task run
never imports the simulator), what a training run needs from it: the rollout collector
built from a config (``from_config(config, competitions=None)``), the reward source that
``--reward`` / ``--world-model`` name (``(config, predictor=None, *, log=None,
executor=None)``) and the evaluation run during training (``(config, executor) ->
evaluate(policy, when)``); and, as plain values, the policy a run uses when none is named
and whether its episodes run in a sandbox (so a sandbox executor is built for it). A new
family registers itself with `register_task_family` and becomes a valid ``task`` in configs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["TASK_FAMILIES", "TaskFamily", "register_task_family", "task_family"]


@dataclass(frozen=True)
class TaskFamily:
    """A task family: its name, and where its collector and reward-source builders live (``module:attribute``)."""

    name: str
    collector: str
    reward_source: str
    evaluator: str
    default_policy: str
    runs_in_sandbox: bool

    def make_collector(self, config: Any, competitions: Any = None) -> Any:
        """The family's rollout collector for `config` (`competitions` overrides a code task's split)."""
        return _resolve(self.collector)(config, competitions)

    def make_reward_source(self, config: Any, predictor: Any = None, *, log: Any = None, executor: Any = None) -> Any:
        """The reward source `config.reward` names for this family."""
        return _resolve(self.reward_source)(config, predictor, log=log, executor=executor)

    def make_evaluator(self, config: Any, executor: Any = None) -> Any:
        """``evaluate(policy, when)``, the family's held-out evaluation for `config`, run through `executor`."""
        return _resolve(self.evaluator)(config, executor)


TASK_FAMILIES: dict[str, TaskFamily] = {}
"""The registered families by name."""


def register_task_family(family: TaskFamily) -> None:
    """Make `family` a valid ``task`` of training configs (a name registered twice is refused)."""
    if family.name in TASK_FAMILIES and TASK_FAMILIES[family.name] != family:
        raise ValueError(f"a task family named {family.name!r} is already registered: {TASK_FAMILIES[family.name]}")
    TASK_FAMILIES[family.name] = family


def task_family(name: str) -> TaskFamily:
    """The registered family `name`; a KeyError naming the known ones otherwise."""
    if name not in TASK_FAMILIES:
        raise KeyError(f"unknown task family {name!r}; registered: {', '.join(TASK_FAMILIES)}")
    return TASK_FAMILIES[name]


def _resolve(path: str) -> Callable[..., Any]:
    module, _, attributes = path.partition(":")
    target: Any = importlib.import_module(module)
    for name in attributes.split("."):
        target = getattr(target, name)
    return target


register_task_family(
    TaskFamily(
        "mledojo",
        collector="wmrl_agents.grpo.rollouts:CodeRollouts.from_config",
        reward_source="wmrl_agents.grpo.sources:code_reward_source",
        evaluator="wmrl_agents.bench.training_evaluation:held_out_evaluator",
        default_policy="program",
        runs_in_sandbox=True,
    )
)
register_task_family(
    TaskFamily(
        "libero",
        collector="wmrl_agents.libero.rollouts:LiberoRollouts.from_config",
        reward_source="wmrl_agents.libero.sources:build_libero_source",
        evaluator="wmrl_agents.libero.training_evaluation:success_evaluator",
        default_policy="tiny-vla",
        runs_in_sandbox=False,
    )
)
