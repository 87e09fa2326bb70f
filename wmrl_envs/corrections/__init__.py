"""Corrections that make world-model rewards safe to train on: Online Debiasing and Inverse-Variance Denoising.

Per training step: `AnchorScheduler` picks the anchor groups (scored by real
execution and the world model); their pairs feed `OnlineDebiaser`, whose monotone
map calibrates every world-model reward; once that map exists, residuals of the
updated map on the anchor groups feed `InverseVarianceWeighter`, which sets how
much more an anchor group counts; `FallbackRule` watches calibration, ranking and residuals and, if
the world model gets worse, raises the anchor fraction and weight, down to plain
GRPO on real execution. Every object saves and restores its full state as JSON.
"""

from wmrl_envs.corrections.debias import OnlineDebiaser
from wmrl_envs.corrections.denoise import InverseVarianceWeighter
from wmrl_envs.corrections.fallback import (
    FallbackConfig,
    FallbackDecision,
    FallbackRule,
    FallbackState,
    mean_rank_correlation,
    rank_correlation,
)
from wmrl_envs.corrections.schedule import AnchorScheduler
from wmrl_envs.corrections.state import StateDictError

__all__ = [
    "AnchorScheduler",
    "FallbackConfig",
    "FallbackDecision",
    "FallbackRule",
    "FallbackState",
    "InverseVarianceWeighter",
    "OnlineDebiaser",
    "StateDictError",
    "mean_rank_correlation",
    "rank_correlation",
]
