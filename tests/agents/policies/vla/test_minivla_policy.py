"""MiniVLA as a VLA policy on a tiny random run loaded through the real loader: acting, re-scoring, one GRPO step."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from minivla_tiny_run import ACTION_STATS, INSTRUCTIONS
from wmrl_agents.policies.factory import describe_policy, make_policy, policy_from_config
from wmrl_agents.policies.vla.base import ACTION_BINS, ACTION_DIM, ActionTrajectory
from wmrl_agents.policies.vla.minivla import MiniVLAPolicy
from wmrl_agents.policy import Episode, Sample


def _observation(rng: np.random.Generator, instruction: str, size: int = 48) -> dict:
    return {"image": rng.integers(0, 256, (size, size, 3), dtype=np.uint8), "instruction": instruction}


def _sample(choices: list) -> Sample:
    trajectory = ActionTrajectory([c.inputs for c in choices], np.stack([c.tokens for c in choices]))
    old = torch.from_numpy(np.concatenate([c.logprobs for c in choices]))
    return Sample(text="", code=None, tokens=trajectory, old_logprobs=old)


@pytest.fixture(scope="module")
def policy(minivla_run: Path) -> MiniVLAPolicy:
    return MiniVLAPolicy.from_checkpoint(minivla_run, device="cpu", score_chunk=2)


def test_actions_are_seven_dimensional_in_the_checkpoints_range_with_their_log_probabilities(policy) -> None:
    rng = np.random.default_rng(0)
    observations = [_observation(rng, INSTRUCTIONS[i % 2]) for i in range(4)]
    choices = policy.act(observations, temperature=1.0, generator=torch.Generator().manual_seed(0))
    low, high = np.array(ACTION_STATS["q01"][:6]), np.array(ACTION_STATS["q99"][:6])
    for choice in choices:
        assert choice.tokens.shape == (ACTION_DIM,) and 0 <= choice.tokens.min() and choice.tokens.max() < ACTION_BINS
        assert choice.action.shape == (ACTION_DIM,) and choice.action.dtype == np.float32
        assert np.all(choice.action[:6] >= low - 1e-6) and np.all(choice.action[:6] <= high + 1e-6)
        assert choice.action[6] in (-1.0, 1.0)  # LIBERO's gripper: open or close
        assert np.all(choice.logprobs <= 0) and np.all(np.isfinite(choice.logprobs))
    np.testing.assert_array_equal(choices[0].action, policy.tokenizer.decode(choices[0].tokens))
    again = policy.act(observations, temperature=1.0, generator=torch.Generator().manual_seed(0))
    assert [c.tokens.tolist() for c in again] == [c.tokens.tolist() for c in choices]
    greedy = policy.act(observations[:1], temperature=0.0)[0]
    assert np.all(greedy.logprobs >= -np.log(ACTION_BINS))  # the most likely of 256 bins has at least 1/256
    assert greedy.tokens.tolist() == policy.act(observations[:1], temperature=0.0)[0].tokens.tolist()


def test_score_tokens_reproduces_the_log_probabilities_of_generation_with_gradients(policy) -> None:
    rng = np.random.default_rng(1)
    generator = torch.Generator().manual_seed(1)
    choices = []
    for step in range(5):  # two instructions interleaved, more steps than one scoring chunk
        choices += policy.act([_observation(rng, INSTRUCTIONS[step % 2])], temperature=1.5, generator=generator)
    sample = _sample(choices)
    [scores] = policy.score_tokens([Episode(None, "")], [sample])
    assert scores.logprobs.shape == (5 * ACTION_DIM,) and scores.entropy.shape == (5 * ACTION_DIM,)
    torch.testing.assert_close(scores.logprobs.detach(), sample.old_logprobs, atol=2e-4, rtol=0)
    assert torch.all(scores.entropy > 0) and torch.all(scores.entropy <= np.log(ACTION_BINS) + 1e-4)
    scores.logprobs.sum().backward()
    grads = [p.grad for p in policy.trainable_parameters()]
    assert any(g is not None and g.abs().sum() > 0 for g in grads)
    for p in policy.trainable_parameters():
        p.grad = None
    [reference] = policy.score_tokens([Episode(None, "")], [sample], reference=True)
    assert not reference.logprobs.requires_grad
    torch.testing.assert_close(reference.logprobs, sample.old_logprobs, atol=2e-4, rtol=0)


def test_only_the_llm_and_projector_train_and_their_state_round_trips(policy, minivla_run: Path) -> None:
    trainable = {id(p) for p in policy.trainable_parameters()}
    assert all(id(p) not in trainable for p in policy.vla.vision.parameters())
    assert all(id(p) in trainable for p in policy.vla.projector.parameters())
    assert policy._reference.vision is policy.vla.vision  # the frozen reference shares the frozen ViTs
    description = describe_policy(policy)
    assert description["kind"] == "minivla" and description["config"]["checkpoint"].endswith(".pt")
    rebuilt = policy_from_config("minivla", description["config"])
    state = policy.state_dict()
    with torch.no_grad():
        policy.trainable_parameters()[0].add_(0.5)
    rebuilt.load_state_dict(policy.state_dict())
    torch.testing.assert_close(rebuilt.trainable_parameters()[0], policy.trainable_parameters()[0])
    policy.load_state_dict(state)
    with pytest.raises(ValueError, match="not a MiniVLAPolicy state"):
        rebuilt.load_state_dict({"format": "other"})


def test_lora_trains_adapters_only_and_scores_the_reference_without_them(minivla_run: Path) -> None:
    lora = make_policy(f"minivla:{minivla_run}", options={"lora_rank": 4, "device": "cpu"})
    names = [n for n, _ in lora._trainable]
    assert names and all("lora_" in n for n in names)
    rng = np.random.default_rng(2)
    choices = lora.act(
        [_observation(rng, INSTRUCTIONS[0])], temperature=1.0, generator=torch.Generator().manual_seed(2)
    )
    with torch.no_grad():
        for p in lora.trainable_parameters():
            p.add_(torch.randn_like(p) * 0.5)
    [moved] = lora.score_tokens([Episode(None, "")], [_sample(choices)])
    [reference] = lora.score_tokens([Episode(None, "")], [_sample(choices)], reference=True)
    torch.testing.assert_close(reference.logprobs, torch.from_numpy(choices[0].logprobs), atol=2e-4, rtol=0)
    assert not torch.allclose(moved.logprobs.detach(), reference.logprobs, atol=1e-3)


def test_one_grpo_step_through_the_libero_collector_moves_minivla(minivla_run: Path, libero_assets, tmp_path) -> None:
    from wmrl_agents.grpo.config import preset
    from wmrl_agents.grpo.trainer import GRPOTrainer
    from wmrl_agents.libero.sources import build_libero_source
    from wmrl_tasks.libero import ProgressModelConfig, TinyProgressModel

    progress = tmp_path / "progress.pt"
    TinyProgressModel(ProgressModelConfig(frame_size=32)).save(progress)
    config = preset("libero-smoke").replace(
        libero={"assets_dir": str(libero_assets), "image_size": 32},
        steps=1,
        reward="corrected",
        world_model=f"tiny-progress:{progress}",
    )
    policy = MiniVLAPolicy.from_checkpoint(minivla_run, device="cpu", score_chunk=4)
    before = [p.detach().clone() for p in policy.trainable_parameters()]
    trainer = GRPOTrainer(policy, config, tmp_path / "run", reward_source=build_libero_source(config))
    try:
        record = trainer.train_step()
    finally:
        trainer.collector.close()
    rewards = record["rewards"]
    assert rewards["trajectories"] == 4 and rewards["mean_steps"] > 0 and rewards["real_scored"] >= 2
    distinct = [g for g in record["groups"] if len(set(g["rewards"])) > 1]
    moved = any(not torch.equal(b, p) for b, p in zip(before, policy.trainable_parameters(), strict=True))
    assert moved or not distinct, (
        "a group with distinct rewards has non-zero advantages, so the update must move MiniVLA"
    )
