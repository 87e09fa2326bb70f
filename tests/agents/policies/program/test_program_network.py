"""The recipe network is autoregressive: a factor's distribution depends on the task and earlier choices only."""

from __future__ import annotations

import torch
from wmrl_agents.policies.program.network import RecipeNet

SIZES = (3, 4, 2, 5)


def _net() -> RecipeNet:
    torch.manual_seed(0)
    net = RecipeNet(6, 16, SIZES)
    with torch.no_grad():  # away from the near-uniform start, so differences show
        for head in net.heads:
            head.weight.normal_()
    return net


def test_later_choices_do_not_change_earlier_factors_logits():
    net = _net()
    features = torch.randn(1, 6)
    a = torch.tensor([[1, 2, 0, 4]])
    b = torch.tensor([[1, 2, 1, 0]])  # same first two choices
    la, lb = net(features, a), net(features, b)
    assert torch.equal(la[:, :3], lb[:, :3])
    assert not torch.allclose(la[:, 3], lb[:, 3])


def test_teacher_forcing_matches_factor_by_factor_decoding():
    net = _net()
    features = torch.randn(4, 6)
    choices = torch.tensor([[0, 1, 1, 2], [2, 3, 0, 4], [1, 0, 1, 1], [0, 0, 0, 0]])
    forced = net(features, choices)
    task = net.embed_task(features)
    context = torch.zeros_like(task)
    for factor, size in enumerate(SIZES):
        stepwise = net.head_logits(task, context, factor)
        assert torch.allclose(forced[:, factor, :size], stepwise, atol=1e-6)
        context = context + net.choice_vectors(factor, choices[:, factor])


def test_an_untrained_network_is_close_to_uniform():
    torch.manual_seed(0)
    logits = RecipeNet(6, 16, SIZES)(torch.randn(8, 6), torch.zeros(8, 4, dtype=torch.long))
    assert logits.abs().max() < 0.2
