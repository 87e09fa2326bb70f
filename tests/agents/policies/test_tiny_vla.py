"""TinyVLAPolicy: batched seeded acting, re-scoring that matches acting, a frozen reference, and guarded weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from vla_test_data import SMALL, observation
from wmrl_agents.policies.vla.base import ACTION_BINS, ActionTrajectory, VLAPolicy
from wmrl_agents.policies.vla.tiny import TinyInputs, TinyVLAPolicy
from wmrl_agents.policy import Episode, Sample


@pytest.fixture(autouse=True)
def _one_torch_thread() -> None:
    torch.set_num_threads(1)


def _policy(seed: int = 0, **changes: object) -> TinyVLAPolicy:
    return TinyVLAPolicy.from_config({**SMALL, "seed": seed, **changes})


def _observations(n: int, seed: int = 0, **kwargs: object) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [observation(rng, **kwargs) for _ in range(n)]


def _sample(choices: list) -> Sample:
    trajectory = ActionTrajectory([c.inputs for c in choices], np.stack([c.tokens for c in choices]))
    old = torch.from_numpy(np.concatenate([c.logprobs for c in choices]))
    return Sample(text="", code=None, tokens=trajectory, old_logprobs=old)


def _score(policy: TinyVLAPolicy, sample: Sample, reference: bool = False) -> torch.Tensor:
    [scores] = policy.score_tokens([Episode(None, "")], [sample], reference=reference)
    return scores.logprobs


def test_act_returns_one_seven_dimensional_choice_per_observation_with_compact_inputs() -> None:
    policy = _policy()
    assert isinstance(policy, VLAPolicy) and policy.name == "tiny-vla"
    observations = _observations(3) + _observations(1, seed=1, wrist=False, size=20)
    choices = policy.act(observations, temperature=1.0, generator=torch.Generator().manual_seed(0))
    assert len(choices) == 4
    for choice in choices:
        assert choice.tokens.shape == (7,) and choice.tokens.dtype == np.int64
        assert np.all((choice.tokens >= 0) & (choice.tokens < ACTION_BINS))
        assert np.array_equal(choice.action, policy.tokenizer.decode(choice.tokens))
        assert choice.logprobs.shape == (7,) and choice.logprobs.dtype == np.float32 and np.all(choice.logprobs <= 0)
        assert isinstance(choice.inputs, TinyInputs)
        assert choice.inputs.image.shape == (16, 16, 3) and choice.inputs.image.dtype == np.uint8
    assert choices[-1].inputs.wrist_image is None and choices[0].inputs.wrist_image.shape == (16, 16, 3)
    assert policy.act([], temperature=1.0) == []


def test_a_seeded_generator_makes_sampling_repeatable() -> None:
    policy, observations = _policy(), _observations(6)
    draws = [
        np.stack(
            [c.tokens for c in policy.act(observations, temperature=1.0, generator=torch.Generator().manual_seed(s))]
        )
        for s in (7, 7, 8)
    ]
    assert np.array_equal(draws[0], draws[1])
    assert not np.array_equal(draws[0], draws[2])


def test_temperature_zero_picks_the_most_likely_bin_of_every_dimension() -> None:
    policy = _policy(seed=2)
    obs = _observations(1)
    [greedy] = policy.act(obs, temperature=0, generator=torch.Generator().manual_seed(0))
    [again] = policy.act(obs, temperature=0.0)
    assert np.array_equal(greedy.tokens, again.tokens)
    every_bin = ActionTrajectory([greedy.inputs] * ACTION_BINS, np.repeat(np.arange(ACTION_BINS)[:, None], 7, axis=1))
    with torch.no_grad():
        table = _score(policy, Sample("", None, every_bin, torch.zeros(0))).view(ACTION_BINS, 7)
    assert np.array_equal(table.argmax(dim=0).numpy(), greedy.tokens)


def test_temperature_must_be_a_finite_non_negative_number() -> None:
    policy, observations = _policy(), _observations(1)
    for bad in (-0.5, float("nan"), float("inf"), True):
        with pytest.raises(ValueError, match="temperature"):
            policy.act(observations, temperature=bad)


def test_score_tokens_reproduces_the_log_probabilities_act_returned_with_gradients() -> None:
    policy = _policy()
    choices = policy.act(_observations(12), temperature=1.5, generator=torch.Generator().manual_seed(3))
    sample = _sample(choices)
    logprobs = _score(policy, sample)
    assert logprobs.shape == (12 * 7,)
    assert torch.allclose(logprobs, sample.old_logprobs, atol=1e-5)  # 12 steps scored in chunks of 5
    assert logprobs.requires_grad
    (-logprobs.sum()).backward()
    grads = [p.grad for p in policy.trainable_parameters()]
    assert all(g is not None for g in grads) and sum(float(g.abs().sum()) for g in grads) > 0
    [scores] = policy.score_tokens([Episode(None, "")], [sample])
    assert scores.entropy.shape == (12 * 7,) and torch.all(scores.entropy > 0)
    assert float(scores.entropy.detach().max()) <= float(np.log(ACTION_BINS)) + 1e-5


def test_chunked_scoring_of_a_long_episode_equals_scoring_it_whole() -> None:
    chunked, whole = _policy(score_chunk=4), _policy(score_chunk=64)
    choices = chunked.act(_observations(30), temperature=1.0, generator=torch.Generator().manual_seed(0))
    sample = _sample(choices)
    assert torch.allclose(_score(chunked, sample), _score(whole, sample), atol=1e-5)


def test_the_reference_stays_frozen_at_the_initial_weights_after_an_optimizer_step() -> None:
    policy = _policy()
    sample = _sample(policy.act(_observations(8), temperature=1.0, generator=torch.Generator().manual_seed(0)))
    before = _score(policy, sample, reference=True)
    assert not before.requires_grad
    optimizer = torch.optim.AdamW(policy.trainable_parameters(), lr=1e-2)
    (-_score(policy, sample).mean()).backward()
    optimizer.step()
    assert torch.equal(_score(policy, sample, reference=True), before)
    assert not torch.allclose(_score(policy, sample).detach(), before)


def test_construction_is_seeded_and_the_state_round_trips() -> None:
    first, same, other = _policy(seed=5), _policy(seed=5), _policy(seed=6)
    weights = first.state_dict()["weights"]
    assert all(torch.equal(weights[k], same.state_dict()["weights"][k]) for k in weights)
    assert not all(torch.equal(weights[k], other.state_dict()["weights"][k]) for k in weights)
    other.load_state_dict(first.state_dict())
    assert all(torch.equal(weights[k], other.state_dict()["weights"][k]) for k in weights)
    assert TinyVLAPolicy(seed=5).config()["seed"] == 5


def test_a_mismatching_state_is_refused_with_a_clear_message() -> None:
    policy = _policy()
    with pytest.raises(ValueError, match=r"do not fit this TinyVLAPolicy .*hidden"):
        policy.load_state_dict(_policy(hidden=48).state_dict())
    with pytest.raises(ValueError, match="not a TinyVLAPolicy state"):
        policy.load_state_dict({"format": "wmrl-program-policy/1", "weights": {}})
    with pytest.raises(TypeError, match="no 'weights'"):
        policy.load_state_dict({"format": "wmrl-tiny-vla/1"})


def test_samples_of_another_policy_or_shape_are_refused() -> None:
    policy = _policy()
    choices = _policy(image_size=24).act(_observations(2), temperature=1.0)
    with pytest.raises(ValueError, match="not made by this TinyVLAPolicy"):
        policy.score_tokens([Episode(None, "")], [_sample(choices)])
    with pytest.raises(TypeError, match="ActionTrajectory"):
        policy.score_tokens([Episode(None, "")], [Sample("", None, torch.zeros(7, dtype=torch.long), torch.zeros(7))])
    with pytest.raises(ValueError, match="2 episodes but 1 samples"):
        policy.score_tokens([Episode(None, ""), Episode(None, "")], [_sample(choices)])


def test_invalid_settings_and_observations_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown TinyVLAPolicy config keys \\['width'\\]"):
        TinyVLAPolicy.from_config({"width": 3})
    with pytest.raises(ValueError, match="image_size"):
        TinyVLAPolicy.from_config({"image_size": 4})
    with pytest.raises(ValueError, match="channels"):
        TinyVLAPolicy.from_config({"channels": [4, 8]})
    policy = _policy()
    obs = _observations(1)[0]
    with pytest.raises(KeyError, match="lacks \\['image'\\]"):
        policy.act([{k: v for k, v in obs.items() if k != "image"}], temperature=1.0)
    with pytest.raises(ValueError, match="uint8"):
        policy.act([{**obs, "image": obs["image"].astype(np.float32)}], temperature=1.0)
