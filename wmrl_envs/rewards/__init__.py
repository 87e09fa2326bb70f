"""Interchangeable reward sources: RealExecution, WorldModel and Corrected (WMRL), and GRPO advantages over them."""

from wmrl_envs.rewards.advantages import group_advantages, prediction_powered_advantages
from wmrl_envs.rewards.base import (
    ANCHOR,
    WORLD_MODEL,
    GroupRewardSource,
    GroupScore,
    RewardSource,
    Rollout,
    Score,
    code_rollouts,
)
from wmrl_envs.rewards.corrected import Corrected
from wmrl_envs.rewards.observers import Observed, Observers, ScoreObserver, observe
from wmrl_envs.rewards.predicted import PredictedSource
from wmrl_envs.rewards.real import RealExecution
from wmrl_envs.rewards.scoring import GroupScoring, groups_scored_together, score_step
from wmrl_envs.rewards.world_model import WorldModel

__all__ = [
    "ANCHOR",
    "WORLD_MODEL",
    "Corrected",
    "GroupRewardSource",
    "GroupScore",
    "GroupScoring",
    "Observed",
    "Observers",
    "PredictedSource",
    "RealExecution",
    "RewardSource",
    "Rollout",
    "Score",
    "ScoreObserver",
    "WorldModel",
    "code_rollouts",
    "group_advantages",
    "groups_scored_together",
    "observe",
    "prediction_powered_advantages",
    "score_step",
]
