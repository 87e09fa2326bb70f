"""OpenVLA's action tokens: bins over normalized actions, their LLM token ids, and LIBERO's action conventions.

OpenVLA (and MiniVLA, its Prismatic/Qwen2.5 descendant) discretizes each normalized
action dimension with `np.digitize` against 256 evenly spaced *edges* over [-1, 1]
(so 255 intervals, whose centres decode the bins), and writes bin b as the LLM token
``vocab_len - 1 - b``: the last 256 ids of the vocabulary, where a BPE vocabulary keeps
its least used tokens (MiniVLA's "extra" tokenizer counts Qwen's added tokens in
``vocab_len``; the loaded model's action tokenizer says which). These functions are
that convention, kept pure so they can be tested without the model.

Actions are normalized per dimension with the training data's 1st and 99th
percentiles (``dataset_statistics.json``; dimensions whose ``mask`` is false, the
gripper, pass through), and the LIBERO evaluation of OpenVLA and MiniVLA maps the
model's gripper value (in [0, 1], 1 = open, the training data's flipped convention)
to the simulator's -1 = open / +1 = close by ``-sign(2g - 1)``. `LiberoActionTokenizer`
composes all of it, so its `decode` gives the action the environment takes and its
`encode` the bins a demonstration's action corresponds to.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from wmrl_agents.policies.vla.base import ACTION_BINS, ACTION_DIM, ActionTokenizer

__all__ = [
    "ActionStatistics",
    "LiberoActionTokenizer",
    "OpenVLABins",
    "action_token_ids",
    "bins_to_token_ids",
    "env_gripper_to_model",
    "model_gripper_to_env",
    "token_ids_to_bins",
]


def bins_to_token_ids(bins: np.ndarray, vocab_len: int, n_bins: int = ACTION_BINS) -> np.ndarray:
    """The LLM token id of every bin index: ``vocab_len - 1 - bin`` (int64); bins outside [0, n_bins) are refused.

    >>> bins_to_token_ids(np.array([0, 255]), 151_665).tolist()
    [151664, 151409]
    """
    _check_vocab(vocab_len, n_bins)
    bins = np.asarray(bins, dtype=np.int64)
    if bins.size and (bins.min() < 0 or bins.max() >= n_bins):
        raise ValueError(f"action bins must lie in [0, {n_bins}), got [{bins.min()}, {bins.max()}]")
    return vocab_len - 1 - bins


def token_ids_to_bins(token_ids: np.ndarray, vocab_len: int, n_bins: int = ACTION_BINS) -> np.ndarray:
    """The bin index of every action token id (int64); ids outside the last `n_bins` of the vocabulary are refused."""
    _check_vocab(vocab_len, n_bins)
    bins = vocab_len - 1 - np.asarray(token_ids, dtype=np.int64)
    if bins.size and (bins.min() < 0 or bins.max() >= n_bins):
        raise ValueError(
            f"token ids must be action tokens, in [{vocab_len - n_bins}, {vocab_len}); got ids mapping to bins "
            f"[{bins.min()}, {bins.max()}]"
        )
    return bins


def action_token_ids(vocab_len: int, n_bins: int = ACTION_BINS) -> np.ndarray:
    """The token ids of bins 0, 1, ..., n_bins - 1, in bin order (descending ids): the columns of action logits."""
    return bins_to_token_ids(np.arange(n_bins), vocab_len, n_bins)


class OpenVLABins(ActionTokenizer):
    """OpenVLA's binning of normalized actions: `np.digitize` on 256 edges over [-1, 1], decoded to interval centres.

    >>> tok = OpenVLABins()
    >>> tok.encode(np.array([-1.0, 0.0, 1.0])).tolist()
    [0, 127, 255]
    >>> round(float(tok.decode(np.array([255]))[0]), 6)  # the last bin decodes to the last interval's centre
    0.996078
    """

    def __init__(self) -> None:
        super().__init__(ACTION_BINS, -1.0, 1.0)
        self.edges = np.linspace(-1.0, 1.0, ACTION_BINS)
        self.centres = (self.edges[:-1] + self.edges[1:]) / 2.0

    def encode(self, actions: np.ndarray) -> np.ndarray:
        """Bin index (int64) of every normalized value (clipped to [-1, 1]); NaN is refused."""
        actions = np.asarray(actions, dtype=np.float64)
        if not np.all(np.isfinite(actions)):
            raise ValueError("cannot tokenize an action holding NaN or infinity")
        index = np.digitize(np.clip(actions, -1.0, 1.0), self.edges) - 1
        return np.clip(index, 0, ACTION_BINS - 1).astype(np.int64)

    def decode(self, tokens: np.ndarray) -> np.ndarray:
        """The normalized value (float32) of every bin: its interval's centre (bin 255, hit only at 1.0, as 254)."""
        tokens = np.asarray(tokens)
        if tokens.size and (tokens.min() < 0 or tokens.max() >= ACTION_BINS):
            raise ValueError(f"action tokens must lie in [0, {ACTION_BINS}), got [{tokens.min()}, {tokens.max()}]")
        return self.centres[np.minimum(tokens.astype(np.int64), len(self.centres) - 1)].astype(np.float32)


@dataclass(frozen=True)
class ActionStatistics:
    """Per-dimension action percentiles (q01, q99) of the training data, and which dimensions are normalized."""

    low: np.ndarray
    high: np.ndarray
    mask: np.ndarray

    @classmethod
    def from_dataset_statistics(cls, statistics: Mapping[str, Any], key: str) -> ActionStatistics:
        """The ``statistics[key]["action"]`` entry of an OpenVLA ``dataset_statistics.json``."""
        try:
            action = statistics[key]["action"]
            low = np.asarray(action["q01"], dtype=np.float64)
            high = np.asarray(action["q99"], dtype=np.float64)
            mask = np.asarray(action.get("mask", [True] * len(low)), dtype=bool)
        except (KeyError, TypeError) as err:
            raise ValueError(
                f"dataset statistics have no action q01/q99 for {key!r} ({type(err).__name__}: {err}); "
                f"available keys: {sorted(statistics) if isinstance(statistics, Mapping) else '?'}"
            ) from err
        if not (low.shape == high.shape == mask.shape == (ACTION_DIM,)):
            raise ValueError(
                f"dataset statistics for {key!r} must hold {ACTION_DIM} values each in q01, q99 and mask, got "
                f"{low.shape}, {high.shape}, {mask.shape}"
            )
        return cls(low, high, mask)

    def unnormalize(self, normalized: np.ndarray) -> np.ndarray:
        """Actions from normalized values: ``(n + 1) / 2 * (q99 - q01) + q01`` where masked, unchanged elsewhere."""
        normalized = np.asarray(normalized, dtype=np.float64)
        return np.where(self.mask, 0.5 * (normalized + 1.0) * (self.high - self.low) + self.low, normalized)

    def normalize(self, actions: np.ndarray) -> np.ndarray:
        """The inverse of `unnormalize` on masked dimensions, clipped to [-1, 1] as OpenVLA's data pipeline does."""
        actions = np.asarray(actions, dtype=np.float64)
        scaled = np.clip(2.0 * (actions - self.low) / (self.high - self.low + 1e-8) - 1.0, -1.0, 1.0)
        return np.where(self.mask, scaled, actions)


def model_gripper_to_env(gripper: np.ndarray) -> np.ndarray:
    """OpenVLA's LIBERO gripper post-processing: [0, 1] (1 = open) to -1 (open) / +1 (close), ``-sign(2g - 1)``."""
    return -np.sign(2.0 * np.asarray(gripper, dtype=np.float64) - 1.0)


def env_gripper_to_model(gripper: np.ndarray) -> np.ndarray:
    """A LIBERO gripper command (-1 open, +1 close) as the model's value in [0, 1] (1 = open): ``(1 - g) / 2``."""
    return (1.0 - np.clip(np.asarray(gripper, dtype=np.float64), -1.0, 1.0)) / 2.0


class LiberoActionTokenizer(OpenVLABins):
    """Bins <-> LIBERO environment actions for an OpenVLA-family model: normalization and gripper included.

    `encode` takes environment actions (..., 7) and `decode` gives them back (the gripper binarized to -1/+1, as
    the evaluation executes it), so a policy's `ActionChoice.action` is `tokenizer.decode(tokens)` as for any VLA.
    """

    def __init__(self, statistics: ActionStatistics) -> None:
        super().__init__()
        self.statistics = statistics

    def encode(self, actions: np.ndarray) -> np.ndarray:
        """The bins (int64, (..., 7)) the model emits for these environment actions."""
        actions = _actions(np.asarray(actions, dtype=np.float64))
        if not np.all(np.isfinite(actions)):
            raise ValueError("cannot tokenize an action holding NaN or infinity")
        model = actions.copy()
        model[..., -1] = env_gripper_to_model(actions[..., -1])
        return super().encode(self.statistics.normalize(model))

    def decode(self, tokens: np.ndarray) -> np.ndarray:
        """The environment action (float32, (..., 7)) of every row of bins."""
        actions = self.statistics.unnormalize(super().decode(_actions(tokens)))
        actions[..., -1] = model_gripper_to_env(actions[..., -1])
        return actions.astype(np.float32)


def _actions(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values)
    if values.ndim == 0 or values.shape[-1] != ACTION_DIM:
        raise ValueError(f"LIBERO actions have {ACTION_DIM} dimensions in their last axis, got shape {values.shape}")
    return values


def _check_vocab(vocab_len: int, n_bins: int) -> None:
    if isinstance(vocab_len, bool) or not isinstance(vocab_len, (int, np.integer)) or vocab_len <= n_bins:
        raise ValueError(f"the vocabulary must be longer than the {n_bins} action tokens, got vocab_len={vocab_len!r}")
