"""The program policy keeps the Policy contract the GRPO trainer relies on."""

from __future__ import annotations

import ast

import pytest
import torch
from wmrl_agents.policies.program import FACTORS, ProgramPolicy, make_recipe, task_profile
from wmrl_agents.policies.program.features import task_features
from wmrl_agents.policies.program.recipe import allowed
from wmrl_agents.policies.program.sampling import masked_log_softmax
from wmrl_agents.policy import Episode, Policy, Sample, Turn
from wmrl_tasks.mledojo.catalog import load_competitions


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def episodes(pool_root) -> list[Episode]:
    """Two episodes of every training competition (a group per task, as the trainer builds them)."""
    return [Episode(c, f"task {c.id}") for c in load_competitions("train", pool_root) for _ in range(2)]


def test_it_is_a_policy_named_program():
    policy = ProgramPolicy()
    assert isinstance(policy, Policy)
    assert policy.name == "program"
    assert ProgramPolicy.from_config(policy.config()).config() == {"seed": 0, "hidden": 64}


def test_generate_renders_a_parseable_solution_per_episode(episodes):
    samples = ProgramPolicy(seed=3).generate(episodes, temperature=1.0, top_p=1.0, seed=0)
    assert len(samples) == len(episodes)
    for sample in samples:
        assert isinstance(sample, Sample) and sample.error is None
        assert sample.code == sample.text
        ast.parse(sample.code)
        assert sample.tokens.dtype == torch.long and sample.tokens.shape == (len(FACTORS),)
        assert sample.old_logprobs.shape == (len(FACTORS),) and not sample.old_logprobs.requires_grad
        assert (sample.old_logprobs <= 0).all()


def test_sampled_log_probabilities_equal_the_scores_of_the_same_weights(episodes):
    policy = ProgramPolicy(seed=1)
    samples = policy.generate(episodes, temperature=0.7, top_p=0.9, seed=5)
    scores = policy.score_tokens(episodes, samples)
    for sample, score in zip(samples, scores, strict=True):
        assert score.logprobs.requires_grad
        assert torch.allclose(score.logprobs.detach(), sample.old_logprobs, atol=1e-6)
        assert (score.entropy >= -1e-6).all()


def test_inert_factors_carry_probability_one_and_no_entropy(episodes):
    policy = ProgramPolicy()
    [sample] = policy.generate(episodes[:1], temperature=1.0, top_p=1.0, seed=0)
    profile = task_profile(episodes[0].competition)
    active = set(policy.recipe_of(sample).active(profile))
    [score] = policy.score_tokens(episodes[:1], [sample])
    for i, factor in enumerate(FACTORS):
        if factor.name not in active:
            assert score.logprobs[i].item() == 0.0 and abs(score.entropy[i].item()) < 1e-12
        else:
            assert score.logprobs[i].item() < 0.0 and score.entropy[i].item() > 0.0


def test_the_same_seed_gives_the_same_samples_and_another_seed_others(episodes):
    policy = ProgramPolicy()
    first = policy.generate(episodes, temperature=1.0, top_p=1.0, seed=11)
    again = policy.generate(episodes, temperature=1.0, top_p=1.0, seed=11)
    other = policy.generate(episodes, temperature=1.0, top_p=1.0, seed=12)
    assert [s.code for s in first] == [s.code for s in again]
    assert [s.tokens.tolist() for s in first] != [s.tokens.tolist() for s in other]


def test_a_seed_leaves_the_global_rng_alone_and_no_seed_draws_from_it(episodes):
    policy = ProgramPolicy()
    torch.manual_seed(0)
    expected = torch.rand(1)
    torch.manual_seed(0)
    policy.generate(episodes[:2], temperature=1.0, top_p=1.0, seed=3)
    assert torch.equal(torch.rand(1), expected)
    torch.manual_seed(7)
    first = policy.generate(episodes, temperature=1.0, top_p=1.0)
    torch.manual_seed(7)
    assert [s.tokens.tolist() for s in policy.generate(episodes, temperature=1.0, top_p=1.0)] == [
        s.tokens.tolist() for s in first
    ]


def test_tiny_top_p_picks_the_most_likely_choice_of_every_factor(episodes):
    policy = ProgramPolicy(seed=4)
    samples = policy.generate(episodes, temperature=1.0, top_p=1e-9, seed=0)
    greedy = policy.generate(episodes, temperature=0.0, top_p=1.0, seed=1)
    assert [s.tokens.tolist() for s in samples] == [s.tokens.tolist() for s in greedy]
    for episode, sample in zip(episodes, samples, strict=True):
        profile = task_profile(episode.competition)
        tokens = sample.tokens
        with torch.no_grad():
            logits = policy.model(task_features(profile)[None], tokens[None])[0]
        for i in range(len(FACTORS)):
            mask = torch.zeros(logits.shape[-1], dtype=torch.bool)
            row = allowed(profile, i, tokens[:i].tolist())
            mask[: len(row)] = torch.tensor(row)
            assert int(tokens[i]) == int(masked_log_softmax(logits[i], mask).argmax())


def test_the_reference_stays_fixed_while_an_optimizer_step_moves_the_policy(episodes):
    policy = ProgramPolicy(seed=2)
    samples = policy.generate(episodes, temperature=1.0, top_p=1.0, seed=0)
    before = [s.logprobs.detach() for s in policy.score_tokens(episodes, samples, reference=True)]
    for _ in range(3):  # plain gradient steps (torch.optim's first use costs seconds of imports)
        loss = -torch.stack([s.logprobs.sum() for s in policy.score_tokens(episodes, samples)]).mean()
        parameters = policy.trainable_parameters()
        for p, g in zip(parameters, torch.autograd.grad(loss, parameters), strict=True):
            p.data.add_(g, alpha=-0.5)
    moved = policy.score_tokens(episodes, samples)
    after = policy.score_tokens(episodes, samples, reference=True)
    assert all(not a.logprobs.requires_grad for a in after)
    for b, a in zip(before, after, strict=True):
        assert torch.equal(b, a.logprobs)
    # the policy moved: the sampled recipes became more likely on average
    assert sum(m.logprobs.detach().sum() for m in moved) > sum(s.old_logprobs.sum() for s in samples) + 1.0


def test_state_dict_round_trips_into_a_fresh_policy(episodes):
    trained = ProgramPolicy(seed=0, hidden=16)
    with torch.no_grad():
        for p in trained.trainable_parameters():
            p.add_(0.1 * torch.randn_like(p))
    state = trained.state_dict()
    with torch.no_grad():  # the snapshot does not follow later changes
        trained.trainable_parameters()[0].add_(1.0)
    fresh = ProgramPolicy.from_config(state["config"])
    fresh.load_state_dict(state)
    trained.load_state_dict(state)
    samples = trained.generate(episodes, temperature=1.0, top_p=1.0, seed=9)
    assert [s.tokens.tolist() for s in fresh.generate(episodes, temperature=1.0, top_p=1.0, seed=9)] == [
        s.tokens.tolist() for s in samples
    ]
    for a, b in zip(fresh.score_tokens(episodes, samples), trained.score_tokens(episodes, samples), strict=True):
        assert torch.equal(a.logprobs, b.logprobs)


def test_weights_of_another_size_are_refused_with_what_to_do():
    state = ProgramPolicy(hidden=32).state_dict()
    with pytest.raises(ValueError, match=r"hidden=64.*another shape.*ProgramPolicy.from_config"):
        ProgramPolicy(hidden=64).load_state_dict(state)


def test_states_from_elsewhere_are_refused():
    policy = ProgramPolicy(hidden=8)
    with pytest.raises(ValueError, match="not a ProgramPolicy state"):
        policy.load_state_dict({"weights": {}})
    state = policy.state_dict()
    state["factors"] = state["factors"][:-1]
    with pytest.raises(ValueError, match="different recipe vocabulary"):
        policy.load_state_dict(state)


def test_episode_turns_are_ignored_not_an_error(episodes):
    policy = ProgramPolicy()
    [first] = policy.generate(episodes[:1], temperature=1.0, top_p=1.0, seed=0)
    later = Episode(episodes[0].competition, episodes[0].prompt, turns=[Turn(first, "# Result: score 0.5")])
    [second] = policy.generate([later], temperature=1.0, top_p=1.0, seed=0)
    assert second.code == first.code
    [score] = policy.score_tokens([later], [second])
    assert torch.allclose(score.logprobs.detach(), second.old_logprobs)


def test_a_given_recipe_becomes_a_sample_scored_under_the_policy(episodes):
    policy = ProgramPolicy()
    profile = task_profile(episodes[0].competition)
    recipe = make_recipe(profile, model="linear", validation="holdout")
    sample = policy.sample_from_recipe(episodes[0], recipe)
    assert policy.recipe_of(sample) == recipe
    [score] = policy.score_tokens(episodes[:1], [sample])
    assert torch.allclose(score.logprobs.detach(), sample.old_logprobs)


def test_foreign_samples_and_bad_settings_get_clear_errors(episodes):
    policy = ProgramPolicy()
    foreign = Sample(text="print(1)", code="print(1)", tokens=[1, 2], old_logprobs=torch.zeros(2))
    with pytest.raises(TypeError, match="not made by a ProgramPolicy"):
        policy.score_tokens(episodes[:1], [foreign])
    with pytest.raises(ValueError, match="2 episodes but 1 samples"):
        policy.score_tokens(episodes[:2], [foreign])
    ranking = [e for e in load_competitions("all") if e.id == "movielens-next-favorites"]
    [tabular] = policy.generate(episodes[:1], temperature=1.0, top_p=1.0, seed=0)
    with pytest.raises(ValueError, match="not allowed for movielens-next-favorites"):
        policy.score_tokens([Episode(ranking[0], "")], [tabular])
    with pytest.raises(ValueError, match="top_p"):
        policy.generate(episodes[:1], temperature=1.0, top_p=0.0)
    with pytest.raises(ValueError, match="hidden"):
        ProgramPolicy(hidden=0)
    with pytest.raises(ValueError, match="unknown ProgramPolicy config keys"):
        ProgramPolicy.from_config({"seed": 0, "width": 3})
