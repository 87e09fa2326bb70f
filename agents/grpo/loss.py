"""The GRPO loss, written once, with its aggregation variants as named options.

Per token t of trajectory i, with advantage A_i (group-relative, times its group's weight
normalised over the step, `wmrl_envs.corrections.normalised_weights`):

    ratio  = exp(logp - old_logp)                               the PPO importance ratio
    pg     = -min(ratio * A_i, clip(ratio, 1 - eps, 1 + eps) * A_i)
    kl     = exp(ref_logp - logp) - (ref_logp - logp) - 1       k3: unbiased, always >= 0 (Schulman, 2020)
    loss_t = pg + beta * kl - entropy_coef * entropy_t

and the tokens are aggregated by `loss_type`:

- ``"grpo"`` (Shao et al., 2024): each trajectory's token mean, then the mean over
  trajectories: every trajectory counts the same whatever its length;
- ``"dr_grpo"`` (Liu et al., 2025, "Understanding R1-Zero-Like Training"): each
  trajectory's token sum divided by a constant (the generation budget), then the mean
  over trajectories: dividing by a trajectory's own length biases the gradient towards
  short correct answers and long wrong ones, a constant does not.

Because the group weights reaching A_i average 1 over the step's trajectories, the
mean over trajectories makes the policy-gradient term the inverse-variance fusion
``sum_g w_g pg_g / sum_g w_g`` while the KL and entropy terms stay plain means: raising
the anchor weight shifts how much anchors count, never the policy gradient's size
against the penalties.

Trajectories the reward source could not score never reach this function: they have
no advantage, and the trainer drops them (a missing score is not a bad score).

The loss is a sum over trajectories divided by the batch's trajectory count, so the
trainer can evaluate it micro-batch by micro-batch (pass `n_sequences` = the whole
batch's count) and accumulate gradients that equal the full batch's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from wmrl_agents.grpo.config import LOSS_TYPES

__all__ = ["LossStats", "grpo_loss"]


@dataclass
class LossStats:
    """Token and trajectory sums behind the loss's diagnostics; `merge` micro-batches, then read the means."""

    sequences: int = 0
    tokens: int = 0
    kl_sum: float = 0.0
    entropy_sum: float = 0.0
    clipped_tokens: int = 0
    ratio_sum: float = 0.0
    loss_sum: float = 0.0

    def merge(self, other: LossStats) -> LossStats:
        """The sums of both."""
        return LossStats(
            *(getattr(self, f) + getattr(other, f) for f in self.__dataclass_fields__)  # type: ignore[arg-type]
        )

    def means(self) -> dict[str, float | None]:
        """Per-token means of KL, entropy and ratio, the clipped share of tokens, and the loss (None when empty)."""
        if not self.tokens:
            return {"kl": None, "entropy": None, "clip_fraction": None, "ratio": None, "loss": None}
        return {
            "kl": self.kl_sum / self.tokens,
            "entropy": self.entropy_sum / self.tokens,
            "clip_fraction": self.clipped_tokens / self.tokens,
            "ratio": self.ratio_sum / self.tokens,
            "loss": self.loss_sum,
        }


def grpo_loss(
    logprobs: Sequence[torch.Tensor],
    old_logprobs: Sequence[torch.Tensor],
    ref_logprobs: Sequence[torch.Tensor],
    entropies: Sequence[torch.Tensor],
    advantages: Sequence[float],
    *,
    clip_epsilon: float = 0.2,
    kl_coef: float = 0.04,
    entropy_coef: float = 0.002,
    loss_type: str = "grpo",
    max_tokens: int | None = None,
    n_sequences: int | None = None,
) -> tuple[torch.Tensor, LossStats]:
    """The loss of a batch of trajectories (one 1-D tensor of per-token values each) and its diagnostics.

    `max_tokens` is Dr. GRPO's constant (required for ``"dr_grpo"``); `n_sequences` is the number of
    trajectories of the whole batch when this is one micro-batch of it (default: this batch's count).
    """
    n = len(logprobs)
    if not n == len(old_logprobs) == len(ref_logprobs) == len(entropies) == len(advantages):
        raise ValueError(
            f"grpo_loss needs one entry per trajectory in every argument; got {n} logprobs, {len(old_logprobs)} "
            f"old_logprobs, {len(ref_logprobs)} ref_logprobs, {len(entropies)} entropies, {len(advantages)} advantages"
        )
    if loss_type not in LOSS_TYPES:
        raise ValueError(f"loss_type must be one of {LOSS_TYPES}, got {loss_type!r}")
    if loss_type == "dr_grpo" and (max_tokens is None or max_tokens < 1):
        raise ValueError(f"the dr_grpo loss needs max_tokens >= 1 (its constant normaliser), got {max_tokens!r}")
    total = n if n_sequences is None else n_sequences
    if total < n or total < 1:
        raise ValueError(f"n_sequences ({n_sequences}) must be at least the {n} trajectories given, and >= 1")

    stats = LossStats(sequences=n)
    parts: list[torch.Tensor] = []
    for i, (logp, old, ref, entropy, advantage) in enumerate(
        zip(logprobs, old_logprobs, ref_logprobs, entropies, advantages, strict=True)
    ):
        if not logp.shape == old.shape == ref.shape == entropy.shape or logp.dim() != 1:
            raise ValueError(
                f"trajectory {i}: logprobs {tuple(logp.shape)}, old_logprobs {tuple(old.shape)}, ref_logprobs "
                f"{tuple(ref.shape)} and entropies {tuple(entropy.shape)} must be 1-D tensors of the same length"
            )
        if logp.numel() == 0:
            continue  # nothing sampled, nothing to push: it still counts in the mean over trajectories
        old, ref = old.to(logp), ref.to(logp)
        ratio = torch.exp(logp - old)
        clipped_ratio = torch.clamp(ratio, 1.0 - clip_epsilon, 1.0 + clip_epsilon)
        pg = -torch.minimum(ratio * advantage, clipped_ratio * advantage)
        log_ref_ratio = ref - logp
        kl = torch.exp(log_ref_ratio) - log_ref_ratio - 1.0
        per_token = pg + kl_coef * kl - entropy_coef * entropy.to(logp)
        if loss_type == "grpo":
            parts.append(per_token.mean())
        else:
            parts.append(per_token.sum() / max_tokens)
        with torch.no_grad():
            clipped = ((ratio < 1.0 - clip_epsilon) & (advantage < 0)) | (
                (ratio > 1.0 + clip_epsilon) & (advantage > 0)
            )
            stats.tokens += logp.numel()
            stats.kl_sum += float(kl.sum())
            stats.entropy_sum += float(entropy.sum())
            stats.clipped_tokens += int(clipped.sum())
            stats.ratio_sum += float(ratio.sum())
    if parts:
        loss = torch.stack(parts).sum() / total
    else:
        anchor = logprobs[0] if n else torch.zeros(())
        loss = anchor.sum() * 0.0
    stats.loss_sum = float(loss.detach())
    return loss, stats
