"""The CPU program policy: a small torch network that samples solution recipes and renders them as code.

It is the embedded default's stand-in for an LLM. For each episode it reads the task's
public features (`task_profile`, `task_features`), samples one choice per recipe factor
from the network's factorised, autoregressive categorical distributions (`RecipeNet`),
and renders the recipe as a complete Python solution (`render_solution`) that runs in
the sandbox like any agent's code. For GRPO a "token" is one recipe choice:
`Sample.tokens` holds the choice indices, one per factor of `FACTORS`, and
`score_tokens` gives their log-probabilities and entropies. Factors that are inert for a
task (see `recipe.allowed`) have a single allowed choice, log-probability 0 and entropy 0.

Conventions shared with the language-model policy:

- scores are of the network's own distribution (temperature 1, no top-p), and
  `Sample.old_logprobs` are computed by the same scoring function right after sampling,
  so the loss's ratio compares two outputs of one function;
- temperature 0 is greedy; a `seed` makes `generate` repeatable without touching the
  global RNG; without one a seed is drawn from the global torch RNG (which a trainer
  checkpoints);
- `score_tokens(reference=True)` scores under a frozen copy of the initial weights.

The policy is single-turn by nature: it conditions on the task only and ignores an
episode's earlier turns and their feedback, so every turn is a fresh draw from the
same distribution.

>>> policy = ProgramPolicy(seed=0)
>>> [sample] = policy.generate([Episode(competition, prompt)], temperature=1.0, top_p=1.0, seed=0)  # doctest: +SKIP
>>> policy.recipe_of(sample)["model"]  # doctest: +SKIP
'hist_gbm'
"""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from wmrl_agents.policies.program.features import FEATURE_NAMES, N_FEATURES, task_features
from wmrl_agents.policies.program.network import RecipeNet
from wmrl_agents.policies.program.recipe import FACTORS, Recipe, allowed
from wmrl_agents.policies.program.render import render_solution
from wmrl_agents.policies.program.sampling import (
    check_sampling,
    masked_entropy,
    masked_log_softmax,
    sample_choices,
)
from wmrl_agents.policies.program.task_profile import TaskProfile, task_profile
from wmrl_agents.policies.weights import weights_mismatch
from wmrl_agents.policy import Episode, Sample, TokenScores

__all__ = ["ProgramPolicy"]

STATE_FORMAT = "wmrl-program-policy/1"
_SEED_RANGE = 2**62


class ProgramPolicy:
    """Samples recipes with a small network conditioned on task features; see the module docstring."""

    name = "program"

    def __init__(self, seed: int = 0, hidden: int = 64) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"seed must be an int, got {seed!r}")
        if isinstance(hidden, bool) or not isinstance(hidden, int) or hidden < 1:
            raise ValueError(f"hidden must be a positive int (the network's width), got {hidden!r}")
        self.seed = seed
        self.hidden = hidden
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.model = RecipeNet(N_FEATURES, hidden, [len(f.choices) for f in FACTORS])
        self._reference = copy.deepcopy(self.model).requires_grad_(False).eval()

    @classmethod
    def from_config(cls, data: Mapping[str, Any]) -> ProgramPolicy:
        """Rebuild a policy from what `config()` returned (e.g. stored in a checkpoint)."""
        if not isinstance(data, Mapping):
            raise TypeError(f"a ProgramPolicy config is a mapping like {{'seed': 0, 'hidden': 64}}, got {data!r}")
        unknown = sorted(set(data) - {"seed", "hidden"})
        if unknown:
            raise ValueError(f"unknown ProgramPolicy config keys {unknown}; it takes 'seed' and 'hidden'")
        return cls(**data)

    def config(self) -> dict[str, Any]:
        """The constructor's arguments (JSON-able), from which `from_config` rebuilds this policy and its reference."""
        return {"seed": self.seed, "hidden": self.hidden}

    def generate(
        self, episodes: Sequence[Episode], *, temperature: float, top_p: float, seed: int | None = None
    ) -> list[Sample]:
        """Sample one recipe per episode and render it; `seed` makes the draws repeatable."""
        check_sampling(temperature, top_p)
        if not episodes:
            return []
        began = time.perf_counter()
        profiles = [_profile_of(e, i) for i, e in enumerate(episodes)]
        features = torch.stack([task_features(p) for p in profiles])
        if seed is None:
            seed = int(torch.randint(0, _SEED_RANGE, (1,)).item())
        generator = torch.Generator().manual_seed(int(seed))
        choices = torch.zeros(len(profiles), len(FACTORS), dtype=torch.long)
        self.model.eval()
        with torch.no_grad():
            task = self.model.embed_task(features)
            context = torch.zeros_like(task)
            for factor in range(len(FACTORS)):
                mask = _factor_mask(profiles, choices, factor)
                logits = self.model.head_logits(task, context, factor)
                picked = sample_choices(logits, mask, temperature=temperature, top_p=top_p, generator=generator)
                choices[:, factor] = picked
                context = context + self.model.choice_vectors(factor, picked)
            old = self._scores(self.model, features, choices, profiles)
        codes = [
            render_solution(p, Recipe(tuple(int(c) for c in row))) for p, row in zip(profiles, choices, strict=True)
        ]
        share = (time.perf_counter() - began) / len(episodes)
        return [
            Sample(text=code, code=code, tokens=row.clone(), old_logprobs=lp.detach(), generation_s=share)
            for code, row, lp in zip(codes, choices, old.logprobs, strict=True)
        ]

    def sample_from_recipe(self, episode: Episode, recipe: Recipe) -> Sample:
        """A `Sample` of a given recipe as this policy's turn in `episode`, scored under the current weights."""
        began = time.perf_counter()
        profile = _profile_of(episode, 0)
        choices = torch.tensor([recipe.choices], dtype=torch.long)
        _check_choices(profile, choices[0], 0)
        with torch.no_grad():
            old = self._scores(self.model, task_features(profile)[None], choices, [profile])
        code = render_solution(profile, recipe)
        return Sample(
            text=code,
            code=code,
            tokens=choices[0].clone(),
            old_logprobs=old.logprobs[0].detach(),
            generation_s=time.perf_counter() - began,
        )

    def recipe_of(self, sample: Sample) -> Recipe:
        """The recipe a sample of this policy holds."""
        return Recipe(tuple(int(c) for c in _tokens_of(sample, 0)))

    def score_tokens(
        self, episodes: Sequence[Episode], samples: Sequence[Sample], *, reference: bool = False
    ) -> list[TokenScores]:
        """Per-factor log-probabilities (with gradients unless `reference`) and entropies of each sample's recipe."""
        if len(episodes) != len(samples):
            raise ValueError(f"score_tokens got {len(episodes)} episodes but {len(samples)} samples; pass one each")
        if not samples:
            return []
        profiles = [_profile_of(e, i) for i, e in enumerate(episodes)]
        choices = torch.stack([_tokens_of(s, i) for i, s in enumerate(samples)])
        for i, profile in enumerate(profiles):
            _check_choices(profile, choices[i], i)
        features = torch.stack([task_features(p) for p in profiles])
        if reference:
            with torch.no_grad():
                scores = self._scores(self._reference, features, choices, profiles)
        else:
            self.model.train()
            scores = self._scores(self.model, features, choices, profiles)
        return [TokenScores(logprobs=scores.logprobs[i], entropy=scores.entropy[i]) for i in range(len(samples))]

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        """Every weight of the network (the reference is a separate frozen copy)."""
        return list(self.model.parameters())

    def state_dict(self) -> dict[str, Any]:
        """A snapshot of the weights (cloned), tagged with the recipe vocabulary and feature layout they fit."""
        return {
            "format": STATE_FORMAT,
            "config": self.config(),
            "factors": [[f.name, list(f.names)] for f in FACTORS],
            "features": list(FEATURE_NAMES),
            "weights": {k: v.detach().clone() for k, v in self.model.state_dict().items()},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore weights from `state_dict`; a clear error when they come from another policy, vocabulary or size."""
        if not isinstance(state, Mapping) or state.get("format") != STATE_FORMAT:
            raise ValueError(
                f"not a ProgramPolicy state (expected format {STATE_FORMAT!r}); was it saved by ProgramPolicy.state_dict?"
            )
        factors = [[f.name, list(f.names)] for f in FACTORS]
        if state.get("factors") != factors:
            raise ValueError(
                "the saved policy samples a different recipe vocabulary (factors or choices changed since it was "
                "saved); its weights cannot be mapped onto this version's FACTORS: retrain or use the matching version"
            )
        if state.get("features") != list(FEATURE_NAMES):
            raise ValueError(
                "the saved policy reads a different task-feature layout (FEATURE_NAMES changed since it was saved); "
                "retrain or use the matching version"
            )
        weights = state.get("weights")
        if not isinstance(weights, Mapping):
            raise TypeError("the ProgramPolicy state has no 'weights' mapping; the checkpoint is damaged")
        _check_fits(self.model.state_dict(), weights, self.hidden, state.get("config"))
        with torch.no_grad():
            self.model.load_state_dict(dict(weights), strict=True)

    def _scores(
        self, model: RecipeNet, features: torch.Tensor, choices: torch.Tensor, profiles: Sequence[TaskProfile]
    ) -> TokenScores:
        mask = _full_mask(profiles, choices, model.width)
        logp = masked_log_softmax(model(features, choices), mask)
        token_logp = logp.gather(-1, choices.unsqueeze(-1)).squeeze(-1)
        return TokenScores(logprobs=token_logp, entropy=masked_entropy(logp, mask))


def _profile_of(episode: Episode, index: int) -> TaskProfile:
    if not isinstance(episode, Episode):
        raise TypeError(f"episode {index} is a {type(episode).__name__}, not an Episode")
    return task_profile(episode.competition)


def _tokens_of(sample: Sample, index: int) -> torch.Tensor:
    tokens = sample.tokens
    if not isinstance(tokens, torch.Tensor) or tokens.dtype != torch.long or tuple(tokens.shape) != (len(FACTORS),):
        raise TypeError(
            f"sample {index} was not made by a ProgramPolicy (its tokens should be {len(FACTORS)} choice indices, "
            f"torch.long); build samples with ProgramPolicy.generate or sample_from_recipe"
        )
    return tokens


def _factor_mask(profiles: Sequence[TaskProfile], choices: torch.Tensor, factor: int) -> torch.Tensor:
    rows = [allowed(p, factor, [int(c) for c in choices[b, :factor]]) for b, p in enumerate(profiles)]
    return torch.tensor(rows, dtype=torch.bool)


def _full_mask(profiles: Sequence[TaskProfile], choices: torch.Tensor, width: int) -> torch.Tensor:
    mask = torch.zeros(len(profiles), len(FACTORS), width, dtype=torch.bool)
    for b, profile in enumerate(profiles):
        made = [int(c) for c in choices[b]]
        for factor in range(len(FACTORS)):
            row = allowed(profile, factor, made[:factor])
            mask[b, factor, : len(row)] = torch.tensor(row)
    return mask


def _check_choices(profile: TaskProfile, tokens: torch.Tensor, index: int) -> None:
    made = [int(c) for c in tokens]
    for factor, choice in enumerate(made):
        mask = allowed(profile, factor, made[:factor])
        if not 0 <= choice < len(mask) or not mask[choice]:
            raise ValueError(
                f"sample {index}: choice {choice} of factor {FACTORS[factor].name!r} is not allowed for "
                f"{profile.competition_id}; was the sample made for another task?"
            )


def _check_fits(expected: Mapping[str, torch.Tensor], given: Mapping[str, Any], hidden: int, saved: Any) -> None:
    problem = weights_mismatch(expected, given)
    if problem is not None:
        raise ValueError(
            f"the saved weights do not fit this ProgramPolicy (hidden={hidden}): {problem}; "
            f"the state was saved with config {saved!r}: rebuild with ProgramPolicy.from_config(state['config'])"
        )
