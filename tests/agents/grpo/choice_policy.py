"""A small real policy and a deterministic world model for the trainer's tests.

`ChoicePolicy` is a torch categorical over three replies per task: the pool's "prior"
solution (runs in ~1.5 s, scores a little), its "crash" variant (fails fast, scores 0)
and a reply with no program (a failed turn). It implements the whole `Policy` contract
(seeded sampling, per-token log-probabilities with gradients, entropies, a frozen
reference), so the trainer runs exactly as with the program or language-model policy,
only cheaper. `KeywordPredictor` is a world model that reads the code and never runs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from wmrl_agents.policy import Episode, Sample, TokenScores

from wmrl_envs.code_extraction import extract_code
from wmrl_envs.competition import Competition
from wmrl_envs.world_models import PredictedStatus, Prediction

CHOICES = ("prior", "crash", "no_code")


def reply(competition: Competition, choice: str) -> str:
    """The text the policy writes for `choice` on `competition`."""
    from wmrl_tasks.mledojo.pool.variants import solution_variants

    if choice == "no_code":
        return "I am not sure how to solve this one."
    return f"Here is my solution.\n```python\n{solution_variants(competition, [choice])[choice]}```\n"


class ChoicePolicy:
    """A categorical over `CHOICES`, shared by every task; each sample is one token (the choice's index)."""

    name = "choice"

    def __init__(self, logits: Sequence[float] = (0.0, 0.0, 0.0)) -> None:
        self.logits = torch.nn.Parameter(torch.tensor(list(logits), dtype=torch.float32))
        self.reference = self.logits.detach().clone()

    def _log_probs(self, logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
        return torch.log_softmax(logits / max(temperature, 1e-6), dim=-1)

    def generate(
        self, episodes: Sequence[Episode], *, temperature: float, top_p: float, seed: int | None = None
    ) -> list[Sample]:
        generator = torch.Generator().manual_seed(seed) if seed is not None else None
        with torch.no_grad():
            log_probs = self._log_probs(self.logits, temperature)
            picks = torch.multinomial(log_probs.exp(), len(episodes), replacement=True, generator=generator)
        samples = []
        for episode, pick in zip(episodes, picks.tolist(), strict=True):
            text = reply(episode.competition, CHOICES[pick])
            extracted = extract_code(text)
            samples.append(
                Sample(
                    text=text,
                    code=extracted.code if extracted.ok else None,
                    tokens=torch.tensor([pick]),
                    old_logprobs=log_probs[pick].reshape(1).clone(),
                    error=extracted.syntax_error,
                )
            )
        return samples

    def score_tokens(
        self, episodes: Sequence[Episode], samples: Sequence[Sample], *, reference: bool = False
    ) -> list[TokenScores]:
        logits = self.reference if reference else self.logits
        log_probs = self._log_probs(logits)
        entropy = -(log_probs.exp() * log_probs).sum()
        return [TokenScores(log_probs[s.tokens], entropy.reshape(1)) for s in samples]

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        return [self.logits]

    def state_dict(self) -> dict[str, Any]:
        return {"logits": self.logits.detach().clone()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if set(state) != {"logits"} or state["logits"].shape != self.logits.shape:
            raise ValueError(f"not a ChoicePolicy state: keys {sorted(state)}")
        with torch.no_grad():
            self.logits.copy_(state["logits"])


class KeywordPredictor:
    """A deterministic, instant world model: a crash for the deliberate crash, else a fixed guess by code length."""

    name = "keyword"

    def predict(self, competition: Competition, code: str) -> Prediction:
        if "deliberate crash" in code:
            return Prediction(status=PredictedStatus.CRASHES, cost_s=0.001)
        return Prediction(position=min(1.0, 0.2 + len(code) / 20000), cost_s=0.001)
