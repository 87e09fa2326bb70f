"""Per-token log-probabilities and entropies of replies under a causal LM, in bounded micro-batches.

GRPO's loss needs, for every reply token, log pi(token | prompt, earlier reply tokens)
with gradients, the same under the frozen reference, and the entropy of the next-token
distribution. One forward pass over prompt + reply gives all three. Rows are laid out
with the prompt left-padded and the reply right-padded, so every reply starts in the
same column and only the reply's logits are materialised (``logits_to_keep``): with a
250k-token vocabulary the prompt's logits would dwarf everything else. Position ids are
passed explicitly so a padded row is scored exactly as it would be alone.

Scores are of the model's own distribution (temperature 1). Sampling at another
temperature changes what was sampled, not what is scored: the ratio pi_new / pi_old in
the loss compares two scores of this function, never the sampler's tempered one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from wmrl_agents.policy import TokenScores

__all__ = ["HFTokens", "score_replies"]


@dataclass(frozen=True)
class HFTokens:
    """What re-scoring a reply needs: the exact prompt ids it was sampled after, and the reply's ids.

    `reply` ends with the stop token when the model stopped on its own, so the stop is learned too.
    """

    prompt: torch.Tensor
    reply: torch.Tensor

    def __post_init__(self) -> None:
        for name in ("prompt", "reply"):
            value = getattr(self, name)
            if not isinstance(value, torch.Tensor) or value.ndim != 1 or value.dtype != torch.long:
                raise ValueError(f"HFTokens.{name} must be a 1-D tensor of token ids (torch.long)")
        if self.prompt.numel() == 0 or self.reply.numel() == 0:
            raise ValueError("HFTokens needs at least one prompt token and one reply token")


def score_replies(
    model: Any,
    rows: Sequence[HFTokens],
    *,
    pad_id: int,
    device: torch.device,
    batch_size: int,
) -> list[TokenScores]:
    """Log-probabilities and entropies of each row's reply tokens, `batch_size` rows per forward pass.

    Gradients flow when grad mode is on; rows of similar length are batched together to waste less padding.
    The per-token results come back on the CPU wherever the model runs (they are small), so a trainer's loss
    needs no device bookkeeping and matches `Sample.old_logprobs`, which is stored there too.
    """
    order = sorted(range(len(rows)), key=lambda i: rows[i].prompt.numel() + rows[i].reply.numel())
    scores: list[TokenScores | None] = [None] * len(rows)
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        for i, score in zip(chunk, _score_batch(model, [rows[i] for i in chunk], pad_id, device), strict=True):
            scores[i] = score
    return scores  # type: ignore[return-value]


def _score_batch(model: Any, rows: Sequence[HFTokens], pad_id: int, device: torch.device) -> list[TokenScores]:
    width_prompt = max(r.prompt.numel() for r in rows)
    width_reply = max(r.reply.numel() for r in rows)
    ids = torch.full((len(rows), width_prompt + width_reply), pad_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for b, row in enumerate(rows):
        p, c = row.prompt.numel(), row.reply.numel()
        ids[b, width_prompt - p : width_prompt] = row.prompt
        ids[b, width_prompt : width_prompt + c] = row.reply
        mask[b, width_prompt - p : width_prompt + c] = 1
    ids, mask = ids.to(device), mask.to(device)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    # the logits at column t predict token t + 1: the reply's tokens are predicted from width_prompt - 1 on
    logits = model(
        input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=False, logits_to_keep=width_reply + 1
    ).logits[:, -(width_reply + 1) : -1]
    logp = torch.log_softmax(logits.float(), dim=-1)
    token_logp = logp.gather(-1, ids[:, width_prompt:].unsqueeze(-1)).squeeze(-1)
    entropy = -(logp.exp() * logp).sum(-1)
    token_logp, entropy = token_logp.cpu(), entropy.cpu()  # gradients flow back through the copy
    return [
        TokenScores(logprobs=token_logp[b, : r.reply.numel()], entropy=entropy[b, : r.reply.numel()])
        for b, r in enumerate(rows)
    ]
