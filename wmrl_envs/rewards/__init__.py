"""Interchangeable reward sources: RealExecution, WorldModel and Corrected (WMRL)."""

from wmrl_envs.rewards.base import RewardSource, Rollout, Score
from wmrl_envs.rewards.real import RealExecution

__all__ = ["RealExecution", "RewardSource", "Rollout", "Score"]
