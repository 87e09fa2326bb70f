"""Categorical sampling over masked logits: temperature, nucleus (top-p) filtering, log-probabilities, entropy.

Every factor of a recipe is one categorical draw whose choices may be masked (not
allowed for the task). Masked choices get probability exactly 0 everywhere: in the
sampler, in log-probabilities (-inf, never gathered) and in the entropy (no 0 * -inf).
Nucleus filtering keeps the smallest set of most likely choices whose probability
reaches `top_p` (Holtzman et al., 2020): a choice is kept when the mass ranked strictly
above it is below `top_p`, so the most likely choice always survives and a tiny `top_p`
is greedy decoding.
"""

from __future__ import annotations

import math

import torch

__all__ = ["check_sampling", "masked_entropy", "masked_log_softmax", "sample_choices", "top_p_filter"]


def check_sampling(temperature: float, top_p: float) -> None:
    """Raise a clear error unless temperature >= 0 (0 = greedy) and 0 < top_p <= 1."""
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not math.isfinite(temperature):
        raise ValueError(f"temperature must be a finite number >= 0 (0 = greedy), got {temperature!r}")
    if temperature < 0:
        raise ValueError(f"temperature must be a finite number >= 0 (0 = greedy), got {temperature!r}")
    if isinstance(top_p, bool) or not isinstance(top_p, (int, float)) or not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")


def masked_log_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Log-probabilities over the allowed choices (last dimension); -inf where `mask` is False."""
    return torch.log_softmax(logits.masked_fill(~mask, float("-inf")), dim=-1)


def masked_entropy(logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Entropy of each distribution given by `masked_log_softmax`, ignoring masked choices."""
    return -(logp.exp() * logp.masked_fill(~mask, 0.0)).sum(dim=-1)


def top_p_filter(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    """`probs` (rows summing to 1) restricted to each row's nucleus of mass `top_p`, renormalised."""
    if top_p >= 1.0:
        return probs
    ordered, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    mass_above = torch.cumsum(ordered, dim=-1) - ordered
    keep_sorted = mass_above < top_p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    kept = probs * keep
    return kept / kept.sum(dim=-1, keepdim=True)


def sample_choices(
    logits: torch.Tensor, mask: torch.Tensor, *, temperature: float, top_p: float, generator: torch.Generator
) -> torch.Tensor:
    """One allowed choice per row of `logits` (rows x choices): greedy at temperature 0, else tempered top-p draws."""
    if temperature == 0:
        return logits.masked_fill(~mask, float("-inf")).argmax(dim=-1)
    probs = masked_log_softmax(logits / temperature, mask).exp()
    probs = top_p_filter(probs, top_p)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)
