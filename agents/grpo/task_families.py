"""Task families the trainer can roll out, registered by name: the trainer looks a family up, never branches on it.

A family names, as ``module:attribute`` strings (imported on first use, so a code-task run
never imports the simulator), the two things a training run needs from it: the rollout
collector built from a config (``from_config(config, competitions=None)``) and the
reward source that ``--reward`` / ``--world-model`` name
(``(config, predictor=None, *, log=None, executor=None)``). A new family registers
itself with `register_task_family` and becomes a valid ``task`` in configs.
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

    def make_collector(self, config: Any, competitions: Any = None) -> Any:
        """The family's rollout collector for `config` (`competitions` overrides a code task's split)."""
        return _resolve(self.collector)(config, competitions)

    def make_reward_source(self, config: Any, predictor: Any = None, *, log: Any = None, executor: Any = None) -> Any:
        """The reward source `config.reward` names for this family."""
        return _resolve(self.reward_source)(config, predictor, log=log, executor=executor)


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
        "mledojo", "wmrl_agents.grpo.rollouts:CodeRollouts.from_config", "wmrl_agents.grpo.sources:code_reward_source"
    )
)
register_task_family(
    TaskFamily(
        "libero",
        "wmrl_agents.libero.rollouts:LiberoRollouts.from_config",
        "wmrl_agents.libero.sources:build_libero_source",
    )
)
