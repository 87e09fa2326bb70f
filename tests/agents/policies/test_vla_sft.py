"""Supervised warm start: it fits demonstrations through score_tokens and saves a checkpoint the factory rebuilds."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from vla_test_data import SMALL, coloured_demo, write_libero_file
from wmrl_agents.checkpoint import CheckpointError, load_checkpoint
from wmrl_agents.policies.factory import (
    describe_policy,
    load_policy_from_checkpoint,
    make_policy,
    max_tokens_per_turn,
    policy_from_config,
)
from wmrl_agents.policies.vla.base import ActionTrajectory
from wmrl_agents.policies.vla.demos import Demonstration, read_demos
from wmrl_agents.policies.vla.sft import (
    SFTConfig,
    demo_nll,
    demo_steps,
    learning_rate_at,
    save_policy_checkpoint,
    train_on_demos,
)
from wmrl_agents.policies.vla.tiny import TinyVLAPolicy
from wmrl_agents.policy import Episode, Sample


@pytest.fixture(autouse=True)
def _one_torch_thread() -> None:
    torch.set_num_threads(1)


@pytest.fixture
def demos(tmp_path: Path) -> list[Demonstration]:
    rng = np.random.default_rng(0)
    return read_demos(write_libero_file(tmp_path / "task_demo.hdf5", [coloured_demo(rng, 12) for _ in range(3)]))


def _accuracy(policy: TinyVLAPolicy, demos: list[Demonstration]) -> float:
    """Share of demonstrated action tokens the policy's argmax reproduces, acting on the demonstrations' observations."""
    right = total = 0
    for demo in demos:
        choices = policy.act(list(demo.observations()), temperature=0)
        right += int((np.stack([c.tokens for c in choices]) == policy.tokenizer.encode(demo.actions)).sum())
        total += demo.actions.size
    return right / total


def test_warm_start_lowers_the_demonstrations_nll_and_raises_argmax_accuracy(demos: list[Demonstration]) -> None:
    policy = make_policy("tiny-vla", seed=0, options=SMALL)
    steps = demo_steps(policy, demos)
    assert steps.n_steps == 36 and steps.tokens[0].shape == (12, 7)
    nll_before, accuracy_before = demo_nll(policy, steps), _accuracy(policy, demos)
    seen: list[tuple[int, float]] = []
    losses = train_on_demos(
        policy,
        steps,
        SFTConfig(epochs=40, batch_size=12, learning_rate=3e-3),
        on_epoch=lambda e, x: seen.append((e, x)),
    )
    assert len(losses) == 40 and [e for e, _ in seen] == list(range(1, 41))
    assert losses[-1] < losses[0]
    assert nll_before > 5.0 and demo_nll(policy, steps) < 0.5 * nll_before
    assert accuracy_before < 0.05 and _accuracy(policy, demos) > 0.8


def test_the_warm_start_loss_is_the_nll_that_score_tokens_gives(demos: list[Demonstration]) -> None:
    policy = make_policy("tiny-vla", seed=1, options=SMALL)
    steps = demo_steps(policy, demos[:1])
    trajectory = ActionTrajectory(steps.inputs[0], steps.tokens[0])
    [scores] = policy.score_tokens(
        [Episode(None, demos[0].instruction)], [Sample("", None, trajectory, torch.zeros(0))]
    )
    assert demo_nll(policy, steps) == pytest.approx(-float(scores.logprobs.detach().mean()), rel=1e-5)


def test_a_saved_warm_start_is_rebuilt_by_the_factory_and_starts_grpo(
    demos: list[Demonstration], tmp_path: Path
) -> None:
    policy = make_policy("tiny-vla", seed=0, options=SMALL)
    steps = demo_steps(policy, demos)
    train_on_demos(policy, steps, SFTConfig(epochs=2, batch_size=12))
    path = save_policy_checkpoint(policy, tmp_path / "run", step=6, summary={"losses": [1.0]})
    assert path == tmp_path / "run" / "checkpoints" / "step-00000006"
    checkpoint = load_checkpoint(path)
    assert checkpoint.state["policy"] == describe_policy(policy) and checkpoint.state["sft"] == {"losses": [1.0]}
    rebuilt = load_policy_from_checkpoint(tmp_path / "run")
    assert isinstance(rebuilt, TinyVLAPolicy) and rebuilt.config() == policy.config()
    assert demo_nll(rebuilt, steps) == pytest.approx(demo_nll(policy, steps), rel=1e-6)
    assert max_tokens_per_turn(rebuilt) == 7

    warm = policy_from_config("tiny-vla", {**policy.config(), "init_from": str(tmp_path / "run")})
    sample = Sample("", None, ActionTrajectory(steps.inputs[0], steps.tokens[0]), torch.zeros(0))
    reference = warm.score_tokens([Episode(None, "")], [sample], reference=True)[0].logprobs
    trained = policy.score_tokens([Episode(None, "")], [sample])[0].logprobs.detach()
    assert torch.allclose(reference, trained, atol=1e-6)  # GRPO's KL anchor is the warm start, not random weights


def test_init_from_refuses_a_checkpoint_of_another_shape(demos: list[Demonstration], tmp_path: Path) -> None:
    policy = make_policy("tiny-vla", seed=0, options=SMALL)
    save_policy_checkpoint(policy, tmp_path / "run", step=1, summary={})
    with pytest.raises(CheckpointError, match="init_from .*do not fit"):
        TinyVLAPolicy.from_config({**SMALL, "hidden": 16, "init_from": str(tmp_path / "run")})


def test_invalid_settings_and_empty_demonstrations_are_refused() -> None:
    with pytest.raises(ValueError, match="epochs"):
        SFTConfig(epochs=0)
    with pytest.raises(ValueError, match="learning_rate"):
        SFTConfig(learning_rate=0.0)
    with pytest.raises(ValueError, match="no demonstrations"):
        demo_steps(make_policy("tiny-vla", options=SMALL), [])


def test_shifted_training_still_fits_the_demonstrations_and_leaves_the_stored_inputs_alone(
    demos: list[Demonstration],
) -> None:
    policy = make_policy("tiny-vla", seed=0, options=SMALL)
    steps = demo_steps(policy, demos)
    stored = [inputs.image.copy() for inputs in steps.inputs[0]]
    losses = train_on_demos(policy, steps, SFTConfig(epochs=30, batch_size=12, learning_rate=3e-3, shift_pixels=2))
    assert losses[-1] < losses[0] and demo_nll(policy, steps) < losses[0]
    assert all(np.array_equal(a, b.image) for a, b in zip(stored, steps.inputs[0], strict=True))
    with pytest.raises(ValueError, match="shift_pixels"):
        SFTConfig(shift_pixels=-1)


@given(
    lr=st.floats(1e-6, 1.0),
    updates=st.integers(1, 10_000),
    a=st.integers(0, 10_000),
    b=st.integers(0, 10_000),
)
def test_the_cosine_schedule_starts_at_the_learning_rate_and_only_falls(
    lr: float, updates: int, a: int, b: int
) -> None:
    config = SFTConfig(learning_rate=lr, lr_schedule="cosine")
    early, late = sorted((a % updates, b % updates))
    assert learning_rate_at(config, 0, updates) == pytest.approx(lr)
    assert lr >= learning_rate_at(config, early, updates) >= learning_rate_at(config, late, updates) > 0.0
    assert learning_rate_at(SFTConfig(learning_rate=lr), late, updates) == lr


def _epoch_moves(demos: list[Demonstration], schedule: str) -> list[float]:
    """How far the policy's weights moved in each epoch of a warm start under `schedule`."""
    policy = make_policy("tiny-vla", seed=0, options=SMALL)
    steps = demo_steps(policy, demos)
    weights = [torch.cat([p.detach().flatten() for p in policy.trainable_parameters()])]

    def snapshot(epoch: int, loss: float) -> None:
        weights.append(torch.cat([p.detach().flatten() for p in policy.trainable_parameters()]))

    train_on_demos(
        policy, steps, SFTConfig(epochs=8, batch_size=12, learning_rate=3e-3, lr_schedule=schedule), on_epoch=snapshot
    )
    return [float((b - a).norm()) for a, b in pairwise(weights)]


def test_a_cosine_warm_start_settles_in_its_last_epoch_where_a_constant_one_keeps_moving(
    demos: list[Demonstration],
) -> None:
    constant, cosine = _epoch_moves(demos, "constant"), _epoch_moves(demos, "cosine")
    assert cosine[0] == pytest.approx(constant[0], rel=0.1)  # the first updates run at nearly the full rate
    assert cosine[-1] < 0.1 * cosine[0] and cosine[-1] < 0.2 * constant[-1]
    with pytest.raises(ValueError, match="lr_schedule"):
        SFTConfig(lr_schedule="linear")
