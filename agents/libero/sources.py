"""LIBERO's reward sources for a training run: terminal success, a progress world model, or both corrected.

``reward: real`` scores an episode by the simulator's verdict (`TerminalSuccess`),
``world-model`` by predicted progress over sampled frames (`ProgressWorldModel`),
and ``corrected`` is WMRL: anchor groups get terminal success, the rest calibrated
progress, through the same `Corrected` and the same corrections config as code.

Progress models by spec: ``tiny-progress:PATH`` (a `TinyProgressModel` saved with
``save``) or ``progress-http:URL`` (an external model such as Robometer behind
`HTTPProgressModel`'s JSON protocol).
"""

from __future__ import annotations

from pathlib import Path

from wmrl_agents.grpo.config import ConfigError, GRPOConfig
from wmrl_agents.grpo.corrected_source import corrected_source
from wmrl_agents.grpo.world_model_spec import WorldModelSpec, WorldModelSpecError
from wmrl_tasks.libero import HTTPProgressModel, ProgressPredictor, ProgressWorldModel, TerminalSuccess

from wmrl_envs.rewards import RewardSource

__all__ = ["build_libero_source", "build_progress_model"]


def build_libero_source(
    config: GRPOConfig, predictor: ProgressPredictor | None = None, *, log: object = None, executor: object = None
) -> RewardSource:
    """The source `config.reward` names for LIBERO episodes; `predictor` overrides `config.world_model`.

    `log` and `executor` (the code tasks' execution log and sandbox) do not apply: a LIBERO episode runs in the
    simulator, and one given is refused rather than ignored (`wmrl train` builds no executor for a family that
    does not run in a sandbox).
    """
    if log is not None or executor is not None:
        raise ValueError("LIBERO episodes run in the simulator: an execution log or sandbox executor does not apply")
    if config.reward == "real":
        return TerminalSuccess()
    world_model = ProgressWorldModel(predictor if predictor is not None else build_progress_model(config.world_model))
    if config.reward == "world-model":
        return world_model
    return corrected_source(config, TerminalSuccess(), world_model)


def build_progress_model(spec: str) -> ProgressPredictor:
    """The progress model named by `spec` (`wmrl_agents.grpo.world_model_spec`): tiny-progress or progress-http."""
    try:
        parsed = WorldModelSpec.parse(spec)
        parsed.require_family("libero")
    except WorldModelSpecError as err:
        raise ConfigError(str(err)) from err
    if parsed.kind.name == "tiny-progress":
        from wmrl_tasks.libero import TinyProgressModel

        return TinyProgressModel.load(Path(parsed.target))
    return HTTPProgressModel(parsed.target)
