"""The LIBERO task family (installed as ``wmrl_tasks.libero``): the environment and its reward side.

- `env.LiberoEnv` is ``WMRL-LIBERO-v0`` (``gym.make("WMRL-LIBERO-v0", suite=..., task_id=...)``), on the
  optional ``libero`` extra, with assets from configuration (`assets`) and headless rendering (`runtime`);
- `rewards.TerminalSuccess` (the sparse, trusted anchor) and `rewards.ProgressWorldModel` (predicted progress
  from a few frames) plug into `wmrl_envs.rewards.Corrected`; `progress_model.TinyProgressModel` is the CPU
  progress model, `progress_http.HTTPProgressModel` asks one served elsewhere (e.g. Robometer),
  `recording.record_episode` turns an episode into an `EpisodeRollout` they score.

Importing this package loads neither libero nor torch; `TinyProgressModel` imports torch when first used.
"""

from typing import Any

from .errors import LiberoAssetsMissing, LiberoNotInstalled, LiberoSetupError, RenderingUnavailable
from .frames import DEFAULT_N_FRAMES, sample_frame_indices, sample_frames
from .progress import BatchProgressPredictor, ProgressPredictor
from .progress_http import HTTPProgressModel
from .recording import record_episode
from .rewards import ProgressWorldModel, TerminalSuccess
from .rollout import EpisodeRollout
from .suites import EPISODE_LIMITS, N_TRAIN_INIT_STATES, SUITES

__all__ = [
    "DEFAULT_N_FRAMES",
    "EPISODE_LIMITS",
    "N_TRAIN_INIT_STATES",
    "SUITES",
    "BatchProgressPredictor",
    "EpisodeRollout",
    "HTTPProgressModel",
    "LiberoAssetsMissing",
    "LiberoNotInstalled",
    "LiberoSetupError",
    "ProgressExample",
    "ProgressModelConfig",
    "ProgressPredictor",
    "ProgressWorldModel",
    "RenderingUnavailable",
    "TerminalSuccess",
    "TinyProgressModel",
    "progress_examples",
    "record_episode",
    "sample_frame_indices",
    "sample_frames",
]

_TORCH_NAMES = ("ProgressExample", "ProgressModelConfig", "TinyProgressModel", "progress_examples")


def __getattr__(name: str) -> Any:
    """Import the torch-backed progress model only when one of its names is asked for."""
    if name in _TORCH_NAMES:
        from . import progress_model

        return getattr(progress_model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
