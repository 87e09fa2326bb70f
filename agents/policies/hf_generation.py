"""Sampling the LM policy's replies outside transformers: on a vLLM server or with the vLLM engine in-process.

`HFPolicy` samples with transformers unless `HFPolicyConfig.generation` names another
sampler (built by `hf_samplers.make_sampler`); this module holds what every sampler
shares. A sampler only turns prompt token ids into reply token ids: the policy then
recomputes the old log-probabilities with its own forward pass, as it does after a
transformers sample, so the GRPO ratio compares two outputs of one function whatever
generated the tokens.

What comes back from vLLM is checked before it becomes a sample (`finish_reply`): ids are
integers, a reply that stopped on a stop token ends with it (the stop is learned too), and
nothing follows the first stop. vLLM also reports the log-probability it sampled each token
with; `check_logprob_gap` compares them with the local scores and warns when the two
models disagree far more than numerics explain: the served model is not the trained one
(wrong checkpoint, or a LoRA adapter the server did not apply).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from wmrl_envs.errors import WmrlError

__all__ = [
    "GAP_WARNING",
    "DrawnReply",
    "ReplySampler",
    "check_logprob_gap",
    "finish_reply",
    "request_seeds",
]

logger = logging.getLogger(__name__)

GAP_WARNING = 0.1
"""Mean |served - local| log-probability per token (nats) above which the served model is reported as different."""


@dataclass(frozen=True)
class DrawnReply:
    """A reply's token ids as sampled elsewhere, and the sampler's own log-probability of each (None if not given)."""

    ids: torch.Tensor
    served_logprobs: torch.Tensor | None = None


class ReplySampler(Protocol):
    """Samples one reply per prompt (token ids in, `DrawnReply` out) with the policy's current weights."""

    def sample(
        self, prompts: Sequence[Sequence[int]], *, temperature: float, top_p: float, seed: int | None
    ) -> list[DrawnReply]:
        """One reply per prompt, in order; temperature 0 is greedy; `seed` makes the call repeatable."""
        ...


def request_seeds(seed: int | None, count: int) -> list[int | None]:
    """One seed per request, all derived from `seed` (None: unseeded); a group's identical prompts get different ones."""
    if seed is None:
        return [None] * count
    rng = random.Random(seed)
    return [rng.randrange(2**31) for _ in range(count)]


def finish_reply(
    ids: Any,
    logprobs: Any,
    *,
    finish_reason: Any,
    stop_reason: Any,
    stop_ids: Sequence[int],
    max_new_tokens: int,
    where: str,
) -> DrawnReply:
    """Check a sampled reply and put it in the policy's form; `where` names the source in errors.

    A reply that finished on a stop token ends with it (appended when the sampler left it out); anything after
    the first stop token is dropped; `logprobs` are kept only when there is exactly one per returned token.
    """
    if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in ids):
        raise WmrlError(f"{where} returned malformed reply token ids: {str(ids)[:120]}")
    if finish_reason not in ("stop", "length"):
        raise WmrlError(f"{where} ended a reply with finish_reason={finish_reason!r}, expected 'stop' or 'length'")
    ids = list(ids)
    served = _numbers(logprobs, len(ids))
    if finish_reason == "stop" and not any(i in stop_ids for i in ids):
        ids.append(stop_reason if stop_reason in stop_ids else stop_ids[0])
        served = None
    stops = [k for k, i in enumerate(ids) if i in stop_ids]
    if stops:
        ids = ids[: stops[0] + 1]
        served = served[: stops[0] + 1] if served is not None else None
    if not ids:
        raise WmrlError(f"{where} returned an empty reply (finish_reason={finish_reason!r}): no token to learn from")
    if len(ids) > max_new_tokens:
        raise WmrlError(f"{where} returned {len(ids)} reply tokens, more than max_tokens={max_new_tokens}")
    tensor = torch.tensor(served, dtype=torch.float32) if served is not None else None
    return DrawnReply(torch.tensor(ids, dtype=torch.long), tensor)


def check_logprob_gap(drawn: Sequence[DrawnReply], local: Sequence[torch.Tensor], where: str) -> float | None:
    """Mean |served - local| log-probability per token over the replies that carry both; warns above GAP_WARNING."""
    gaps = [
        (d.served_logprobs - mine.detach().float().cpu()).abs()
        for d, mine in zip(drawn, local, strict=True)
        if d.served_logprobs is not None and d.served_logprobs.shape == mine.shape
    ]
    if not gaps:
        return None
    gap = float(torch.cat(gaps).mean())
    if gap > GAP_WARNING:
        logger.warning(
            "%s sampled with log-probabilities %.2f nats/token away from the policy's own on average: it is not "
            "serving the weights being trained (another checkpoint, or a LoRA adapter it did not apply); the samples "
            "are off-policy. Serve the policy's base model, and see docs/vllm.md for the adapter's module names",
            where,
            gap,
        )
    return gap


def _numbers(values: Any, count: int) -> list[float] | None:
    if not isinstance(values, list) or len(values) != count:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return None
    return [float(v) for v in values]
