"""Supervised warm start of any VLA policy from demonstrations: behaviour cloning on action tokens.

GRPO on LIBERO learns only from episodes that sometimes succeed; a policy that never
succeeds gets no signal (every group's rewards are equal). OpenVLA-style RL recipes
therefore start from a policy fine-tuned on demonstrations. This is that step, for
any `VLAPolicy`:

1. every demonstration step becomes what the policy would have kept had it acted
   there (`encode_observation`) and the bins of the demonstrated action under the
   policy's own tokenizer (`tokenizer.encode`), so the targets are exactly the
   tokens the policy would have to sample;
2. each minibatch of steps, grouped by instruction into `ActionTrajectory` samples,
   is scored by the policy's own `score_tokens`, the function GRPO's update calls,
   so warm start and RL optimise one likelihood;
3. the loss is the mean negative log-likelihood per action token, minimised with
   AdamW and gradient clipping (at a constant or cosine-decayed learning rate);
   steps are shuffled with a seeded generator;
4. optionally each training image is shifted by a few pixels (`shift_pixels`,
   `wmrl_agents.policies.vla.augment`), so few demonstrations overfit less.

The result is saved as a wmrl checkpoint (`wmrl_agents.checkpoint` format), so
`load_policy_from_checkpoint` rebuilds the policy with its weights, and a tiny VLA
can start GRPO from it (``init_from``). It carries no optimizer state: a GRPO run
starts its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from wmrl_agents.policies.vla.augment import shift_images
from wmrl_agents.policies.vla.base import ACTION_DIM, ActionTrajectory, VLAPolicy
from wmrl_agents.policies.vla.demos import Demonstration
from wmrl_agents.policy import Episode, Sample

__all__ = [
    "LR_SCHEDULES",
    "DemoSteps",
    "SFTConfig",
    "demo_nll",
    "demo_steps",
    "learning_rate_at",
    "save_policy_checkpoint",
    "train_on_demos",
]

LR_SCHEDULES = ("constant", "cosine")


@dataclass(frozen=True)
class SFTConfig:
    """Settings of a supervised warm start."""

    epochs: int = 10
    """Passes over every demonstration step."""
    batch_size: int = 64
    """Demonstration steps per optimizer step."""
    learning_rate: float = 1e-3
    """AdamW's learning rate (1e-3 suits the tiny VLA; a MiniVLA fine-tune wants ~2e-5, or more with LoRA)."""
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    """Global gradient-norm clip (0: none)."""
    seed: int = 0
    """Seeds the order of the steps (and the image shifts)."""
    shift_pixels: int = 0
    """Shift every training image by up to this many pixels (0: no augmentation)."""
    lr_schedule: str = "constant"
    """``"constant"``, or ``"cosine"``: the learning rate falls from `learning_rate` to 0 over the run's updates,
    so the last epochs settle instead of jumping around the minimum at full step size."""

    def __post_init__(self) -> None:
        bad = [
            name
            for name in ("epochs", "batch_size", "seed", "shift_pixels")
            if isinstance(getattr(self, name), bool) or not isinstance(getattr(self, name), int)
        ]
        if "shift_pixels" not in bad and self.shift_pixels < 0:
            bad.append("shift_pixels (>= 0)")
        bad += [name for name in ("epochs", "batch_size") if name not in bad and getattr(self, name) < 1]
        if not self.learning_rate > 0:
            bad.append("learning_rate (> 0)")
        if not self.weight_decay >= 0 or not self.max_grad_norm >= 0:
            bad.append("weight_decay / max_grad_norm (>= 0)")
        if self.lr_schedule not in LR_SCHEDULES:
            bad.append(f"lr_schedule (one of {', '.join(LR_SCHEDULES)})")
        if bad:
            raise ValueError(f"invalid SFTConfig: {', '.join(bad)} (got {self!r})")


@dataclass(frozen=True)
class DemoSteps:
    """Demonstrations as a policy sees them: per demonstration its source, instruction, step inputs and bins (T, 7)."""

    sources: list[str]
    instructions: list[str]
    inputs: list[list[Any]]
    tokens: list[np.ndarray]

    @property
    def n_steps(self) -> int:
        """Demonstration steps in all."""
        return sum(len(t) for t in self.tokens)


def demo_steps(policy: VLAPolicy, demos: Iterable[Demonstration]) -> DemoSteps:
    """Each demonstration's steps as `policy`'s inputs and its actions as `policy`'s bins (images dropped after use)."""
    sources, instructions, inputs, tokens = [], [], [], []
    for demo in demos:
        sources.append(demo.source)
        instructions.append(demo.instruction)
        inputs.append([policy.encode_observation(o) for o in demo.observations()])
        tokens.append(np.asarray(policy.tokenizer.encode(demo.actions), dtype=np.int64).reshape(-1, ACTION_DIM))
    if not sources:
        raise ValueError("no demonstrations to learn from: the files hold no demo_<i> groups")
    return DemoSteps(sources, instructions, inputs, tokens)


def train_on_demos(
    policy: VLAPolicy,
    steps: DemoSteps,
    config: SFTConfig | None = None,
    *,
    on_epoch: Callable[[int, float], None] | None = None,
) -> list[float]:
    """Minimise the demonstrations' per-token NLL under `policy.score_tokens`; the mean NLL of every epoch.

    `on_epoch(epoch, mean_nll)` is called after each epoch (1-based), e.g. to show progress.
    """
    config = config if config is not None else SFTConfig()
    parameters = list(policy.trainable_parameters())
    if not parameters:
        raise ValueError(f"policy {policy.name!r} has no trainable parameters")
    optimizer = torch.optim.AdamW(parameters, lr=config.learning_rate, weight_decay=config.weight_decay)
    limit = config.max_grad_norm if config.max_grad_norm > 0 else float("inf")
    index = _step_index(steps)
    rng = np.random.default_rng(config.seed)
    augment = None
    if config.shift_pixels:
        shift_images(steps.inputs[0][0], config.shift_pixels, rng)  # refuses inputs without images, before training

        def augment(inputs: Any) -> Any:
            return shift_images(inputs, config.shift_pixels, rng)

    history = []
    updates = config.epochs * -(-len(index) // config.batch_size)
    done = 0
    for epoch in range(1, config.epochs + 1):
        order = index[rng.permutation(len(index))]
        total, tokens = 0.0, 0
        for start in range(0, len(order), config.batch_size):
            for group in optimizer.param_groups:
                group["lr"] = learning_rate_at(config, done, updates)
            done += 1
            logprobs = _batch_logprobs(policy, steps, order[start : start + config.batch_size], augment)
            loss = -logprobs.mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(parameters, limit)
            optimizer.step()
            total += float(loss.detach()) * logprobs.numel()
            tokens += logprobs.numel()
        history.append(total / tokens)
        if on_epoch is not None:
            on_epoch(epoch, history[-1])
    optimizer.zero_grad(set_to_none=True)
    return history


def learning_rate_at(config: SFTConfig, update: int, updates: int) -> float:
    """The learning rate of 0-based optimizer step `update` of `updates` under `config.lr_schedule`."""
    if config.lr_schedule == "constant":
        return config.learning_rate
    return config.learning_rate * 0.5 * (1.0 + math.cos(math.pi * update / updates))


def demo_nll(policy: VLAPolicy, steps: DemoSteps, batch_size: int = 256) -> float:
    """The mean negative log-likelihood per action token of the demonstrations under `policy` (no gradients)."""
    index = _step_index(steps)
    total = 0.0
    with torch.no_grad():
        for start in range(0, len(index), batch_size):
            total -= float(_batch_logprobs(policy, steps, index[start : start + batch_size]).sum())
    return total / (len(index) * ACTION_DIM)


def save_policy_checkpoint(policy: VLAPolicy, out_dir: str | Path, *, step: int, summary: dict[str, Any]) -> Path:
    """Write `policy` as ``out_dir/checkpoints/step-NNNNNNNN`` (wmrl's checkpoint format); `summary` goes in state.json."""
    from wmrl_agents.checkpoint import save_checkpoint
    from wmrl_agents.grpo.rng import capture_rng
    from wmrl_agents.policies.factory import describe_policy

    described = describe_policy(policy)
    if described is None:
        raise ValueError(
            f"policy {policy.name!r} cannot be rebuilt from a checkpoint (the factory knows no kind for it); "
            "use a policy built by wmrl_agents.policies.factory.make_policy"
        )
    json_rng, torch_rng = capture_rng()
    state = {"policy": described, "policy_name": policy.name, "sft": summary, "rng": json_rng}
    return save_checkpoint(
        Path(out_dir) / "checkpoints",
        step,
        state=state,
        policy_state=policy.state_dict(),
        optimizer_state={},
        torch_rng=torch_rng,
        keep=1,
    )


def _step_index(steps: DemoSteps) -> np.ndarray:
    """(n, 2) int64 rows of (demonstration, step)."""
    rows = [(d, t) for d, tokens in enumerate(steps.tokens) for t in range(len(tokens))]
    if not rows:
        raise ValueError("the demonstrations hold no steps")
    return np.asarray(rows, dtype=np.int64)


def _batch_logprobs(
    policy: VLAPolicy, steps: DemoSteps, rows: np.ndarray, augment: Callable[[Any], Any] | None = None
) -> torch.Tensor:
    """Flat log-probabilities of the demonstrated bins of `rows`, scored as one sample per instruction.

    A step's action depends only on its own inputs and the instruction, so the steps of every demonstration of one
    task can share one sample: a batch costs one forward pass per task rather than one per demonstration.
    """
    episodes: list[Episode] = []
    samples: list[Sample] = []
    instructions = np.asarray([steps.instructions[d] for d in rows[:, 0]], dtype=object)
    for instruction in dict.fromkeys(instructions.tolist()):
        picked = rows[instructions == instruction]
        inputs = [steps.inputs[d][t] for d, t in picked]
        if augment is not None:
            inputs = [augment(step) for step in inputs]
        tokens = np.stack([steps.tokens[d][t] for d, t in picked])
        episodes.append(Episode(None, instruction))
        samples.append(
            Sample(text=instruction, code=None, tokens=ActionTrajectory(inputs, tokens), old_logprobs=torch.zeros(0))
        )
    return torch.cat([s.logprobs.reshape(-1) for s in policy.score_tokens(episodes, samples)])
