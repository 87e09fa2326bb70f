"""Masked categorical sampling: the nucleus is the smallest top set reaching top-p, masks are never crossed."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from wmrl_agents.policies.program.sampling import (
    check_sampling,
    masked_entropy,
    masked_log_softmax,
    sample_choices,
    top_p_filter,
)

_probabilities = st.lists(st.floats(0.01, 10.0), min_size=1, max_size=8).map(
    lambda w: torch.tensor(w, dtype=torch.float64) / sum(w)
)


@settings(max_examples=200, deadline=None)
@given(probs=_probabilities, top_p=st.floats(1e-6, 1.0))
def test_top_p_keeps_the_smallest_most_likely_set_reaching_top_p(probs, top_p):
    filtered = top_p_filter(probs[None], top_p)[0]
    kept = filtered > 0
    assert torch.isclose(filtered.sum(), torch.tensor(1.0, dtype=torch.float64))
    # every kept choice is at least as likely as every dropped one
    if (~kept).any():
        assert probs[kept].min() >= probs[~kept].max()
    # the kept mass reaches top_p, and dropping the least likely kept choice would fall short of it
    assert probs[kept].sum() >= top_p - 1e-12 or bool(kept.all())
    assert probs[kept].sum() - probs[kept].min() < top_p + 1e-12
    assert torch.allclose(filtered[kept], probs[kept] / probs[kept].sum())


def test_top_p_of_one_changes_nothing():
    probs = torch.tensor([[0.5, 0.3, 0.2]])
    assert torch.equal(top_p_filter(probs, 1.0), probs)


@settings(max_examples=50, deadline=None)
@given(logits=st.lists(st.floats(-5, 5), min_size=2, max_size=7), seed=st.integers(0, 2**31))
def test_tiny_top_p_always_picks_the_most_likely_allowed_choice(logits, seed):
    allowed = sorted(logits[1:], reverse=True)
    assume(len(allowed) == 1 or allowed[0] - allowed[1] > 1e-4)  # a tie in probability has no single best choice
    logits_t = torch.tensor([logits])
    mask = torch.ones_like(logits_t, dtype=torch.bool)
    mask[0, 0] = False  # even if it were the best, a masked choice is never picked
    generator = torch.Generator().manual_seed(seed)
    picked = sample_choices(logits_t, mask, temperature=1.0, top_p=1e-9, generator=generator)
    assert int(picked) == int(logits_t.masked_fill(~mask, -math.inf).argmax())


def test_masked_choices_are_never_sampled_and_have_no_mass():
    logits = torch.tensor([[9.0, 0.0, 0.0, 5.0]]).repeat(2000, 1)
    mask = torch.tensor([[False, True, True, False]]).repeat(2000, 1)
    picks = sample_choices(logits, mask, temperature=2.0, top_p=1.0, generator=torch.Generator().manual_seed(0))
    assert set(picks.tolist()) == {1, 2}
    logp = masked_log_softmax(logits[:1], mask[:1])
    assert torch.isinf(logp[0, [0, 3]]).all()
    assert torch.allclose(logp[0, 1:3].exp(), torch.tensor([0.5, 0.5]))
    assert torch.isclose(masked_entropy(logp, mask[:1])[0], torch.tensor(math.log(2)))


def test_a_single_allowed_choice_has_zero_entropy_and_log_probability():
    logits = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    mask = torch.tensor([[True, False, False]])
    logp = masked_log_softmax(logits, mask)
    entropy = masked_entropy(logp, mask)
    assert logp[0, 0].item() == 0.0 and entropy.item() == 0.0
    (logp[0, 0] + entropy[0]).backward()
    assert torch.isfinite(logits.grad).all()


def test_temperature_zero_is_greedy():
    logits = torch.tensor([[0.1, 3.0, 2.9], [5.0, 0.0, 4.0]])
    mask = torch.tensor([[True, True, True], [False, True, True]])
    picks = sample_choices(logits, mask, temperature=0, top_p=0.5, generator=torch.Generator())
    assert picks.tolist() == [1, 2]


def test_sampling_frequencies_follow_the_tempered_distribution():
    logits = torch.log(torch.tensor([[0.7, 0.2, 0.1]])).repeat(20000, 1)
    mask = torch.ones_like(logits, dtype=torch.bool)
    picks = sample_choices(logits, mask, temperature=1.0, top_p=1.0, generator=torch.Generator().manual_seed(1))
    shares = torch.bincount(picks, minlength=3).double() / len(picks)
    assert torch.allclose(shares, torch.tensor([0.7, 0.2, 0.1], dtype=torch.float64), atol=0.015)


@pytest.mark.parametrize(
    ("temperature", "top_p", "message"),
    [(-1.0, 1.0, "temperature"), (math.nan, 1.0, "temperature"), (1.0, 0.0, "top_p"), (1.0, 1.5, "top_p")],
)
def test_impossible_sampling_settings_are_refused(temperature, top_p, message):
    with pytest.raises(ValueError, match=message):
        check_sampling(temperature, top_p)
