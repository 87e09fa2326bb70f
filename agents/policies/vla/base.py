"""The contract of a vision-language-action (VLA) policy: observations in, action tokens out, re-scorable.

OpenVLA-style models emit one token per action dimension: each of the 7 dimensions
(end-effector delta xyz, rotation xyz, gripper) is cut into 256 uniform bins over
[-1, 1], and the model samples a bin per dimension. GRPO then needs, for every step
of an episode, the log-probability of the bins that were sampled, under the current
weights (with gradients) and under the frozen reference: the same `score_tokens`
contract as the code policies (`wmrl_agents.policy.Policy`), so one trainer and one
loss serve both. A VLA "sample" is a whole episode: `Sample.tokens` is an
`ActionTrajectory` holding what the policy saw at each step (in its own compact
form) and the bins it chose.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch
from wmrl_agents.policy import Episode, Sample, TokenScores

__all__ = [
    "ACTION_BINS",
    "ACTION_DIM",
    "ActionChoice",
    "ActionTokenizer",
    "ActionTrajectory",
    "VLAPolicy",
    "check_temperature",
]

ACTION_DIM = 7
ACTION_BINS = 256


class ActionTokenizer:
    """Uniform binning of actions in [low, high] per dimension: `encode` to bin indices, `decode` to bin centres.

    >>> tok = ActionTokenizer()
    >>> tok.encode(np.array([-1.0, 0.0, 1.0])).tolist()
    [0, 128, 255]
    >>> float(tok.decode(np.array([128]))[0])
    0.00390625
    """

    def __init__(self, bins: int = ACTION_BINS, low: float = -1.0, high: float = 1.0) -> None:
        if bins < 2 or not high > low:
            raise ValueError(f"need at least 2 bins and high > low, got bins={bins}, low={low}, high={high}")
        self.bins, self.low, self.high = int(bins), float(low), float(high)
        self.width = (self.high - self.low) / self.bins

    def encode(self, actions: np.ndarray) -> np.ndarray:
        """Bin index (int64) of every value; values outside [low, high] go to the end bins, NaN is refused."""
        actions = np.asarray(actions, dtype=np.float64)
        if not np.all(np.isfinite(actions)):
            raise ValueError("cannot tokenize an action holding NaN or infinity")
        index = np.floor((actions - self.low) / self.width).astype(np.int64)
        return np.clip(index, 0, self.bins - 1)

    def decode(self, tokens: np.ndarray) -> np.ndarray:
        """The centre of every bin index (float32); indices outside [0, bins) are refused."""
        tokens = np.asarray(tokens)
        if tokens.size and (tokens.min() < 0 or tokens.max() >= self.bins):
            raise ValueError(f"action tokens must lie in [0, {self.bins}), got [{tokens.min()}, {tokens.max()}]")
        return (self.low + (tokens.astype(np.float64) + 0.5) * self.width).astype(np.float32)


@dataclass(frozen=True)
class ActionChoice:
    """One step's decision: the bins sampled (7,), the action they decode to (7,), their log-probabilities (7,).

    `inputs` is the policy's own compact copy of what it saw (e.g. downscaled uint8 images, the state and the
    instruction's token ids), kept so the step can be re-scored after the episode without the simulator.
    """

    tokens: np.ndarray
    action: np.ndarray
    logprobs: np.ndarray
    inputs: Any


@dataclass(frozen=True)
class ActionTrajectory:
    """A whole episode as a VLA sample: per step the policy's inputs, and the sampled bins (T, 7)."""

    inputs: list[Any]
    tokens: np.ndarray

    def __post_init__(self) -> None:
        tokens = np.asarray(self.tokens)
        if tokens.ndim != 2 or len(tokens) != len(self.inputs):
            raise ValueError(
                f"tokens must be (T, dims) with one row per input, got {tokens.shape} for {len(self.inputs)}"
            )


def check_temperature(temperature: float) -> None:
    """Refuse a sampling temperature that is not a finite number >= 0 (0 means argmax)."""
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not math.isfinite(temperature):
        raise ValueError(f"temperature must be a finite number >= 0, got {temperature!r}")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0 (0 is argmax), got {temperature}")


@runtime_checkable
class VLAPolicy(Protocol):
    """What the LIBERO rollouts, the GRPO trainer and the evaluation need from a VLA policy."""

    name: str
    tokenizer: ActionTokenizer

    def act(
        self, observations: Sequence[dict[str, Any]], *, temperature: float, generator: torch.Generator | None = None
    ) -> list[ActionChoice]:
        """One action per observation (a WMRL-LIBERO-v0 observation dict), sampled at `temperature` (0: argmax)."""
        ...

    def encode_observation(self, observation: dict[str, Any]) -> Any:
        """The compact inputs `act` keeps in `ActionChoice.inputs` for this observation.

        Supervised warm start (`wmrl_agents.policies.vla.sft`) builds demonstration steps with it, so demonstrations
        are scored from exactly what the policy would have kept had it acted on them.
        """
        ...

    def score_tokens(
        self, episodes: Sequence[Episode], samples: Sequence[Sample], *, reference: bool = False
    ) -> list[TokenScores]:
        """Per sample (its `tokens` an `ActionTrajectory` of T steps): log-probs and entropies, flat (T * 7,)."""
        ...

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        """The parameters the optimizer updates."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """The trainable state (weights; not the frozen reference)."""
        ...

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` returned; raise a clear error when it does not fit this policy."""
        ...
