"""A TRL ``reward_funcs`` function over any WMRL reward source.

TRL's GRPOTrainer calls each reward function as
``f(prompts=..., completions=..., completion_ids=..., **dataset_columns, trainer_state=..., ...)``
with the G completions of a prompt side by side, and reads ``None`` as "could not
score": it leaves the completion out of its group's baseline and gives it zero
advantage, which is exactly WMRL's rule. The task id comes from a dataset column
(``task`` by default). Pass ``num_generations`` (the GRPOConfig's) so that rows with
the same prompt, side by side in a batch, still form separate groups of G.

Group weights and TRL's ``scale_rewards``: this function returns each reward
multiplied by its group's weight normalised over the call's groups (the weights
average 1 over the scored completions, as in the reference trainer's fusion: an anchor
group's raw weight of up to 4 is relative, not a 4x reward). Scaling a group's rewards
by w scales its advantages ``r - mean(r)`` by w only when TRL does not then divide by
a std; so set ``GRPOConfig(scale_rewards="none")`` (the Dr. GRPO setting). With
``"group"`` (TRL's default) the division cancels w exactly; with ``"batch"`` it
distorts it. Pass ``apply_weights=False`` to get unweighted rewards (e.g. to log real
scores) with any setting.

What TRL logs: its ``rewards/<name>/mean`` (and ``reward``) are these weighted rewards
(an anchor group's scores count more there, a fallen-back world-model group's less);
``wmrl/unweighted_reward_mean`` is the mean of the scores themselves, beside
``wmrl/mean_group_weight`` (the raw weights), ``wmrl/anchor_fraction`` and
``wmrl/scored_fraction``.

`trl_dataset` builds the training set from the environment itself: one row per task, the
prompt ``env.reset`` shows for it (as a chat message, or plain text) and its id in the
``task`` column, plus the id-to-competition mapping the reward function looks tasks up in.

Example:
    >>> from trl import GRPOConfig, GRPOTrainer  # doctest: +SKIP
    >>> dataset, competitions = trl_dataset("train")  # doctest: +SKIP
    >>> source = Corrected(RealExecution(), WorldModel(predictor))  # doctest: +SKIP
    >>> reward = trl_reward_func(source, competitions, num_generations=8)  # doctest: +SKIP
    >>> config = GRPOConfig(num_generations=8, scale_rewards="none")  # doctest: +SKIP
    >>> GRPOTrainer(model, reward_funcs=[reward], args=config, train_dataset=dataset)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym

from wmrl_envs.competition import Competition
from wmrl_envs.integrations.completions import (
    CompetitionLookup,
    resolve_competition,
    score_completions,
)
from wmrl_envs.rewards.base import ANCHOR, RewardSource

__all__ = ["completion_text", "trl_dataset", "trl_reward_func"]


def trl_reward_func(
    reward_source: RewardSource,
    competitions: CompetitionLookup,
    task_column: str = "task",
    num_generations: int | None = None,
    apply_weights: bool = True,
    name: str = "wmrl",
) -> Callable[..., list[float | None]]:
    """A GRPOTrainer reward function scoring completions with `reward_source`; the task id is in `task_column`."""
    if not callable(getattr(reward_source, "score", None)):
        raise TypeError(f"reward_source must be a RewardSource, got {type(reward_source).__name__}")

    def reward_func(
        prompts: list[Any], completions: list[Any], completion_ids: Any = None, **kwargs: Any
    ) -> list[float | None]:
        if task_column not in kwargs:
            columns = sorted(k for k in kwargs if k not in ("trainer_state", "log_extra", "log_metric", "environments"))
            raise KeyError(
                f"the reward function needs the task id in dataset column {task_column!r}, but the dataset has "
                f"columns {columns}; add the column or pass task_column="
            )
        tasks = [str(t) for t in kwargs[task_column]]
        items = [
            ((repr(prompt), task), resolve_competition(competitions, task), completion_text(completion))
            for prompt, task, completion in zip(prompts, tasks, completions, strict=True)
        ]
        scored = score_completions(reward_source, items, group_size=num_generations)
        rewards = [None if s.reward is None else s.reward * (s.scale if apply_weights else 1.0) for s in scored]
        _log(kwargs, scored)
        return rewards

    reward_func.__name__ = name
    reward_func.__qualname__ = name
    return reward_func


def trl_dataset(
    tasks: gym.Env | str = "train",
    *,
    data_root: str | Path | None = None,
    max_turns: int = 1,
    conversational: bool = True,
) -> tuple[Any, dict[str, Competition]]:
    """A `datasets.Dataset` of (prompt, task) rows for GRPOTrainer, and the competitions its task ids name.

    `tasks` is a WMRL-MLEDojo-v0 environment (its competitions, turns and limits) or a split name ("train",
    "held-out", "all") of the pool or of `data_root`. Each prompt is what ``env.reset`` shows for that task: a
    one-message conversation (`conversational`, for chat models; TRL applies the chat template) or the text.
    """
    try:
        from datasets import Dataset
    except ImportError as err:
        raise ImportError(f'trl_dataset needs the datasets package (TRL installs it): pip install "wmrl[trl]" ({err})')
    made = isinstance(tasks, str)
    env = gym.make("WMRL-MLEDojo-v0", split=tasks, data_root=data_root, max_turns=max_turns) if made else tasks
    try:
        competitions = getattr(env.unwrapped, "competitions", None)
        if not isinstance(competitions, list):
            raise TypeError(
                f"trl_dataset needs a WMRL-MLEDojo-v0 environment or a split name, got {type(env.unwrapped).__name__}"
            )
        rows = []
        for competition in competitions:
            prompt, _ = env.reset(options={"task": competition.id})
            message = [{"role": "user", "content": prompt}] if conversational else prompt
            rows.append({"prompt": message, "task": competition.id})
    finally:
        if made:
            env.close()
    return Dataset.from_list(rows), {c.id: c for c in competitions}


def completion_text(completion: Any) -> str:
    """The text of a standard (str) or conversational (list of messages) completion."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        content = completion[-1].get("content", "")
        if isinstance(content, list):  # content parts, e.g. [{"type": "text", "text": ...}]
            return "".join(part.get("text", "") for part in content if isinstance(part, dict))
        return str(content)
    raise TypeError(
        f"a completion must be a str or a list of chat messages ending with the assistant's, "
        f"got {type(completion).__name__}"
    )


def _log(kwargs: dict[str, Any], scored: list) -> None:
    """Send WMRL's per-batch diagnostics to TRL's logs when the trainer offers the hooks."""
    log_metric, log_extra = kwargs.get("log_metric"), kwargs.get("log_extra")
    if callable(log_metric) and scored:
        log_metric("wmrl/scored_fraction", sum(s.reward is not None for s in scored) / len(scored))
        log_metric("wmrl/anchor_fraction", sum(s.group_source == ANCHOR for s in scored) / len(scored))
        log_metric("wmrl/mean_group_weight", sum(s.weight for s in scored) / len(scored))
        rewards = [s.reward for s in scored if s.reward is not None]
        if rewards:
            log_metric("wmrl/unweighted_reward_mean", sum(rewards) / len(rewards))
    if callable(log_extra):
        log_extra("wmrl_group_source", [s.group_source for s in scored])
