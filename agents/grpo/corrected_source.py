"""`Corrected` (WMRL) over a task family's real and world-model sources, with a training config's corrections.

Shared by every task family (code: sandboxed execution and a code world model; LIBERO:
terminal success and a progress model), so it lives apart from any one family's sources:
a family's builder imports it, and no family imports another's.
"""

from __future__ import annotations

from wmrl_agents.grpo.config import GRPOConfig

from wmrl_envs.corrections import (
    AdaptiveAnchorFraction,
    AnchorScheduler,
    FallbackRule,
    InverseVarianceWeighter,
    OnlineDebiaser,
)
from wmrl_envs.rewards import Corrected, RewardSource

__all__ = ["corrected_source"]


def corrected_source(config: GRPOConfig, real: RewardSource, world_model: RewardSource) -> Corrected:
    """`Corrected` over `real` and `world_model` with the config's anchors and corrections (any task family)."""
    c = config.corrections
    fallback = FallbackRule(c.fallback_config())
    return Corrected(
        real,
        world_model,
        debiaser=OnlineDebiaser(
            min_pairs=c.min_pairs, refit_every=c.refit_every, window=c.debias_window, map_kind=c.debias_map
        ),
        weighter=InverseVarianceWeighter(
            min_weight=c.min_weight, max_weight=c.max_weight, c=c.variance_c, window=c.variance_window
        ),
        scheduler=AnchorScheduler(fraction=c.anchor_fraction, seed=config.seed),
        fallback=fallback,
        adaptive=AdaptiveAnchorFraction(min_fraction=c.min_anchor_fraction, cost_ratio=c.adaptive_cost_ratio)
        if c.adaptive_anchor_fraction
        else None,
    )
