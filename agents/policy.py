"""The policy contract shared by the GRPO trainer, `wmrl bench` and `wmrl compare`.

A policy turns an episode (a competition and the turns so far) into its next solution,
and can re-score what it sampled: the trainer needs the log-probability of every
sampled token under the current weights (with gradients), under the frozen reference
(for the KL penalty) and the per-token entropy. A "token" is whatever the policy
samples: a text token for a language model, one recipe choice for the program policy.

Two implementations ship: the CPU program policy (`wmrl_agents.policies.program`) and
the Hugging Face causal-LM policy (`wmrl_agents.policies.hf`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import torch

from wmrl_envs.competition import Competition

__all__ = ["Episode", "Policy", "Sample", "TokenScores", "Turn"]


@dataclass(frozen=True)
class Sample:
    """One generated turn: the raw output, the code parsed out of it, and what is needed to re-score it.

    `code` is None when the output held no usable program (no code block, empty generation,
    code that does not parse); such a turn is a failed but scored turn (reward 0), never a crash.
    `tokens` is policy-specific (token ids, recipe choice indices); `old_logprobs` are the
    per-token log-probabilities at sampling time (1-D, no gradient), the ratio's denominator.
    """

    text: str
    code: str | None
    tokens: Any
    old_logprobs: torch.Tensor
    error: str | None = None
    generation_s: float = 0.0


@dataclass(frozen=True)
class Turn:
    """A submitted sample and the feedback text the environment (or world model) returned for it."""

    sample: Sample
    feedback: str


@dataclass
class Episode:
    """One trajectory in progress: the competition, the task prompt, and the turns taken so far.

    `competition` is None for a task that is not a competition (a LIBERO episode: `prompt` holds the instruction
    and its one turn the whole episode's actions).
    """

    competition: Competition | None
    prompt: str
    turns: list[Turn] = field(default_factory=list)


@dataclass(frozen=True)
class TokenScores:
    """Per-token log-probabilities (with gradient unless computed for the reference) and entropies."""

    logprobs: torch.Tensor
    entropy: torch.Tensor


@runtime_checkable
class Policy(Protocol):
    """What the trainer and the benchmark need from a policy."""

    name: str

    def generate(
        self, episodes: Sequence[Episode], *, temperature: float, top_p: float, seed: int | None = None
    ) -> list[Sample]:
        """The next turn of every episode, sampled; one `Sample` per episode, in order."""
        ...

    def score_tokens(
        self, episodes: Sequence[Episode], samples: Sequence[Sample], *, reference: bool = False
    ) -> list[TokenScores]:
        """Log-probabilities and entropies of each sample's tokens given its episode (as it was before the sample).

        With `reference=True`, under the frozen initial weights and without gradients (the KL anchor).
        """
        ...

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        """The parameters the optimizer updates."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to restore the trainable state (weights; not the frozen reference)."""
        ...

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` returned; raise a clear error when it does not fit this policy."""
        ...
