"""The methods `wmrl compare` trains: one reward source each, all from the same policy, seed and tasks.

- ``real``: GRPO on real execution of every rollout (the baseline whose compute WMRL cuts);
- ``world_model``: GRPO on the world model alone (no anchors: its bias is a floor);
- ``wmrl``: the corrected source, Online Debiasing + Inverse-Variance Denoising with ~10% anchor groups;
- ablations (``--ablation``): ``debias_only`` and ``denoise_only``, the corrected source with one correction off,
  and ``ppi``, the same anchors and map with the prediction-powered estimator in place of the inverse-variance
  fusion, and ``adaptive``, the anchor fraction set each step from the measured noise and the declared cost of a
  prediction against a real run, `ADAPTIVE_COST_RATIO` (both options beyond the paper, `wmrl_envs.corrections.ppi`
  and `.adaptive`), and ``centred_map``, WMRL with Online Debiasing's centred isotonic map in place of the paper's
  step function, which ties a group's predictions wherever a step is flat (`wmrl_envs.corrections.debias`).
"""

from __future__ import annotations

from wmrl_agents.grpo.config import GRPOConfig
from wmrl_agents.grpo.sources import build_reward_source

from wmrl_envs.rewards import Corrected, RewardSource
from wmrl_envs.sandbox.base import Executor
from wmrl_envs.world_models import Predictor

__all__ = ["ABLATIONS", "ADAPTIVE_COST_RATIO", "METHODS", "USES_WORLD_MODEL", "config_for", "reward_source_for"]

METHODS = ("real", "world_model", "wmrl")
ABLATIONS = ("debias_only", "denoise_only", "ppi", "adaptive", "centred_map")
USES_WORLD_MODEL = frozenset({"world_model", "wmrl", *ABLATIONS})
"""Methods whose world model's build cost (the real runs it was fit on) counts against them."""

_REWARD = {
    "real": "real",
    "world_model": "world-model",
    "wmrl": "corrected",
    "debias_only": "corrected",
    "denoise_only": "corrected",
    "ppi": "corrected",
    "adaptive": "corrected",
    "centred_map": "corrected",
}
_ESTIMATOR = {"ppi": "ppi"}
"""Methods that combine the groups otherwise than by the paper's fusion."""
_DEBIAS_MAP = {"centred_map": "centred"}
"""Methods whose Online Debiasing fits another map than the config's."""
ADAPTIVE_COST_RATIO = 0.1
"""Prediction cost / real-run cost that ``adaptive`` allocates with, declared so that a seed reproduces its run:
the 16-competition compare-quick published at 98aad63 measured 0.12 s a prediction (world-model-only runs) against
1.13 s of wall time a real run (real GRPO)."""


def config_for(method: str, config: GRPOConfig) -> GRPOConfig:
    """The training config `method` runs with: `config`, with its reward source and estimator."""
    if method not in _REWARD:
        raise ValueError(f"unknown method {method!r}; choose from {', '.join(METHODS + ABLATIONS)}")
    corrections = {
        "estimator": _ESTIMATOR.get(method, "fusion"),
        "adaptive_anchor_fraction": method == "adaptive",
        "adaptive_cost_ratio": ADAPTIVE_COST_RATIO if method == "adaptive" else None,
        "debias_map": _DEBIAS_MAP.get(method, config.corrections.debias_map),
    }
    return config.replace(reward=_REWARD[method], corrections=corrections)


def reward_source_for(
    method: str, config: GRPOConfig, predictor: Predictor | None, executor: str | Executor | None = None
) -> RewardSource:
    """The reward source `method` trains on; `predictor` is the shared world model (None only for ``real``).

    `executor` is the sandbox real runs go through (None: the config's own, `executor_of`).
    """
    if method not in _REWARD:
        raise ValueError(f"unknown method {method!r}; choose from {', '.join(METHODS + ABLATIONS)}")
    if method in USES_WORLD_MODEL and predictor is None:
        raise ValueError(f"method {method!r} needs a world model")
    source = build_reward_source(config_for(method, config), predictor=predictor, executor=executor)
    if isinstance(source, Corrected):
        source.debias = method != "denoise_only"
        source.denoise = method != "debias_only"
    return source
