"""Corrections that make world-model rewards safe to train on: Online Debiasing and Inverse-Variance Denoising.

Per training step: `AnchorScheduler` picks the anchor groups (scored by real
execution and the world model), keeping the realised fraction on target over the run;
`correct_step` then applies the step in the method's order: each anchor group's
out-of-sample residuals (under the map before this step's pairs) feed
`InverseVarianceWeighter`, which sets how much more an anchor group counts; the pairs
feed `OnlineDebiaser`, whose monotone map calibrates every world-model reward;
`FallbackRule` watches calibration, ranking and residuals and, if the world model gets
worse, raises the anchor fraction and weight, down to plain GRPO on real execution.
The step's gradient is the weighted average of its groups' gradients, normalised by the
total weight (`normalised_weights`), or, as an option beyond the paper, the
prediction-powered estimator (`ppi`); `AdaptiveAnchorFraction`, another option, sets the
anchor fraction from the measured noise and the cost of a real run against a prediction. Every object saves and restores its full state as JSON.
"""

from wmrl_envs.corrections.adaptive import AdaptiveAnchorFraction
from wmrl_envs.corrections.debias import OnlineDebiaser
from wmrl_envs.corrections.denoise import InverseVarianceWeighter
from wmrl_envs.corrections.fallback import (
    FallbackConfig,
    FallbackDecision,
    FallbackRule,
    FallbackState,
    mean_rank_correlation,
    rank_correlation,
    rank_evidence,
)
from wmrl_envs.corrections.fusion import normalised_weights
from wmrl_envs.corrections.ppi import power_tuned_lambda, prediction_powered_coefficients
from wmrl_envs.corrections.schedule import AnchorScheduler
from wmrl_envs.corrections.state import StateDictError
from wmrl_envs.corrections.step import StepCorrection, correct_step

__all__ = [
    "AdaptiveAnchorFraction",
    "AnchorScheduler",
    "FallbackConfig",
    "FallbackDecision",
    "FallbackRule",
    "FallbackState",
    "InverseVarianceWeighter",
    "OnlineDebiaser",
    "StateDictError",
    "StepCorrection",
    "correct_step",
    "mean_rank_correlation",
    "normalised_weights",
    "power_tuned_lambda",
    "prediction_powered_coefficients",
    "rank_correlation",
    "rank_evidence",
]
