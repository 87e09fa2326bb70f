"""The program policy's network: task features in, one categorical distribution per recipe factor out.

A two-layer tanh trunk embeds the task; each factor's head reads the trunk's output
plus the embeddings of the choices already made (autoregressive over the factor
order), so the policy can learn that, say, a log target suits boosting but not the
prior, or that kNN wants scaled inputs. Heads start near zero, so the untrained policy
is close to uniform over the allowed choices: its first samples explore every recipe.

Scoring a known recipe uses teacher forcing (all factors in one pass); sampling walks
the factors one at a time with the same heads.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

__all__ = ["RecipeNet"]

_HEAD_INIT_STD = 0.01
_EMBEDDING_INIT_STD = 0.1


class RecipeNet(nn.Module):
    """Trunk over task features, an embedding per (factor, choice), and one linear head per factor."""

    def __init__(self, n_features: int, hidden: int, sizes: Sequence[int]) -> None:
        super().__init__()
        self.sizes = tuple(int(s) for s in sizes)
        self.trunk = nn.Sequential(nn.Linear(n_features, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.choice_embedding = nn.Embedding(sum(self.sizes), hidden)
        self.heads = nn.ModuleList(nn.Linear(hidden, size) for size in self.sizes)
        offsets = torch.tensor([0, *self.sizes[:-1]], dtype=torch.long).cumsum(0)
        self.register_buffer("offsets", offsets, persistent=False)
        nn.init.normal_(self.choice_embedding.weight, std=_EMBEDDING_INIT_STD)
        for head in self.heads:
            nn.init.normal_(head.weight, std=_HEAD_INIT_STD)
            nn.init.zeros_(head.bias)

    @property
    def width(self) -> int:
        """The largest number of choices of any factor (the padded logits' last dimension)."""
        return max(self.sizes)

    def embed_task(self, features: torch.Tensor) -> torch.Tensor:
        """The trunk's embedding of each row of task features (batch x hidden)."""
        return self.trunk(features)

    def head_logits(self, task: torch.Tensor, context: torch.Tensor, factor: int) -> torch.Tensor:
        """Logits of factor `factor` (batch x its choices) given the task embedding and the earlier choices' sum."""
        return self.heads[factor](torch.tanh(task + context))

    def choice_vectors(self, factor: int, choices: torch.Tensor) -> torch.Tensor:
        """Embeddings of `choices` (batch,) of factor `factor`, added to the context of every later factor."""
        return self.choice_embedding(self.offsets[factor] + choices)

    def forward(self, features: torch.Tensor, choices: torch.Tensor) -> torch.Tensor:
        """Teacher-forced logits of every factor (batch x factors x width; padding columns are 0, mask them)."""
        task = self.embed_task(features)
        vectors = self.choice_embedding(self.offsets + choices)  # batch x factors x hidden
        context = torch.cumsum(vectors, dim=1) - vectors  # the sum over earlier factors only
        columns = [
            nn.functional.pad(self.head_logits(task, context[:, factor], factor), (0, self.width - size))
            for factor, size in enumerate(self.sizes)
        ]
        return torch.stack(columns, dim=1)
