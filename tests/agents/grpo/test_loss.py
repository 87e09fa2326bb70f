"""The GRPO loss against numbers worked out by hand: clipping on both sides, k3 KL, entropy, weights, aggregation."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from wmrl_agents.grpo.loss import grpo_loss

from wmrl_envs.rewards import ANCHOR, WORLD_MODEL, GroupScore, group_advantages

# Two trajectories, ratios chosen to hit every branch of the clipped objective (eps = 0.2):
#   A (advantage +1): token 1 ratio 1.5 -> clipped high (objective 1.2); token 2 ratio 0.9 -> inside the range.
#   B (advantage -2): token 1 ratio 0.5 -> clipped low (objective 0.8 * -2); token 2 ratio 1.5 -> NOT clipped,
#                     since with a negative advantage min() keeps the unclipped, more pessimistic 1.5 * -2.
LN = math.log
OLD = [[0.0, 0.0], [0.0, 0.0]]
NEW = [[LN(1.5), LN(0.9)], [LN(0.5), LN(1.5)]]
REF = [[0.0, LN(0.9)], [LN(0.25), LN(1.5)]]
ENTROPY = [[0.5, 1.0], [2.0, 0.0]]
ADVANTAGES = [1.0, -2.0]
KL_COEF, ENTROPY_COEF = 0.1, 0.01

# Per token: pg + 0.1 * k3 - 0.01 * entropy, with k3 = exp(ref - logp) - (ref - logp) - 1.
KL_A1 = 2 / 3 + LN(1.5) - 1  # ref - logp = -ln 1.5: 0.0721318
KL_B1 = 0.5 - LN(0.5) - 1  # ref - logp = ln 0.5: 0.1931472
A1 = -1.2 + KL_COEF * KL_A1 - ENTROPY_COEF * 0.5  # -1.1977868
A2 = -0.9 + 0.0 - ENTROPY_COEF * 1.0  # -0.91
B1 = 1.6 + KL_COEF * KL_B1 - ENTROPY_COEF * 2.0  # 1.5993147
B2 = 3.0  # ratio * A = -3 is the min; no KL (ref = logp), no entropy


def _tensors(rows: list[list[float]], grad: bool = False) -> list[torch.Tensor]:
    return [torch.tensor(r, dtype=torch.float64, requires_grad=grad) for r in rows]


def _loss(loss_type: str = "grpo", max_tokens: int | None = None):
    logprobs, entropies = _tensors(NEW, grad=True), _tensors(ENTROPY, grad=True)
    loss, stats = grpo_loss(
        logprobs,
        _tensors(OLD),
        _tensors(REF),
        entropies,
        ADVANTAGES,
        clip_epsilon=0.2,
        kl_coef=KL_COEF,
        entropy_coef=ENTROPY_COEF,
        loss_type=loss_type,
        max_tokens=max_tokens,
    )
    return loss, stats, logprobs, entropies


def test_grpo_loss_matches_the_hand_computed_value_and_diagnostics() -> None:
    loss, stats, _, _ = _loss()
    assert loss.item() == pytest.approx(((A1 + A2) / 2 + (B1 + B2) / 2) / 2)  # 0.6228820
    assert loss.item() == pytest.approx(0.6228820, abs=1e-6)
    means = stats.means()
    assert means["clip_fraction"] == pytest.approx(2 / 4)  # A1 (high side) and B1 (low side)
    assert means["kl"] == pytest.approx((KL_A1 + KL_B1) / 4)
    assert means["entropy"] == pytest.approx(3.5 / 4)


def test_clipped_tokens_pass_no_policy_gradient_and_unclipped_ones_do() -> None:
    loss, _, logprobs, entropies = _loss()
    loss.backward()
    # d/dlogp: pg gives -ratio * A where unclipped, 0 where clipped; k3 gives beta * (1 - exp(ref - logp)).
    # Each token then carries 1/2 (its trajectory's token mean) times 1/2 (mean over trajectories).
    expected_a = [KL_COEF * (1 - 2 / 3) / 4, -0.9 * 1.0 / 4]
    expected_b = [KL_COEF * (1 - 0.5) / 4, -1.5 * -2.0 / 4]
    assert logprobs[0].grad.tolist() == pytest.approx(expected_a)
    assert logprobs[1].grad.tolist() == pytest.approx(expected_b)
    assert entropies[0].grad.tolist() == pytest.approx([-ENTROPY_COEF / 4] * 2)  # the bonus raises entropy


def test_dr_grpo_divides_token_sums_by_the_constant_not_by_each_length() -> None:
    loss, _, _, _ = _loss("dr_grpo", max_tokens=4)
    assert loss.item() == pytest.approx(((A1 + A2) / 4 + (B1 + B2) / 4) / 2)  # 0.3114410
    with pytest.raises(ValueError, match="max_tokens"):
        _loss("dr_grpo")


def test_group_weights_are_normalised_over_the_step_and_unscored_rollouts_are_excluded() -> None:
    groups = [GroupScore([1.0, 0.0, None], ANCHOR, weight=2.0), GroupScore([0.5, 0.5], WORLD_MODEL)]
    grpo = group_advantages(groups, std="sample")
    # 4 scored rollouts, total weight 2 * 2 + 1 * 2 = 6: the anchor group's weight becomes 2 * 4 / 6 = 4/3.
    # Group 1: mean 0.5, sample std of [1, 0] = 1/sqrt(2): +-0.5 * sqrt(2) * 4/3; the None stays None.
    assert grpo[0][:2] == pytest.approx([2 * math.sqrt(2) / 3, -2 * math.sqrt(2) / 3], rel=1e-5)
    assert grpo[0][2] is None
    assert grpo[1] == [0.0, 0.0]  # no spread, no signal
    dr = group_advantages(groups, std="none")  # Dr. GRPO: centred, not divided by the std; still weighted
    assert dr[0][:2] == pytest.approx([2 / 3, -2 / 3]) and dr[0][2] is None

    kept = [a for group in grpo for a in group if a is not None]
    ones = [torch.zeros(1)] * len(kept)
    loss, stats = grpo_loss(ones, ones, ones, ones, kept, kl_coef=0.0, entropy_coef=0.0)
    assert stats.sequences == 4  # the unscored rollout never reaches the loss
    assert loss.item() == pytest.approx(-sum(kept) / 4)


def test_the_policy_gradient_is_the_weighted_average_of_the_groups_gradients() -> None:
    # Anchor group [1, 0] at weight 4, world-model group [1, 0] at weight 1, Dr. GRPO advantages +-0.5.
    groups = [GroupScore([1.0, 0.0], ANCHOR, weight=4.0), GroupScore([1.0, 0.0], WORLD_MODEL, weight=1.0)]
    advantages = [a for group in group_advantages(groups, std="none") for a in group]
    assert advantages == pytest.approx([0.8, -0.8, 0.2, -0.2])  # normalised weights 4*4/10 and 1*4/10
    logprobs = [torch.zeros(1, dtype=torch.float64, requires_grad=True) for _ in advantages]
    fixed = [torch.zeros(1, dtype=torch.float64) for _ in advantages]
    loss, _ = grpo_loss(logprobs, fixed, fixed, fixed, advantages, kl_coef=0.0, entropy_coef=0.0)
    loss.backward()
    # By hand: group g's gradient wrt trajectory i's logp is -A_i / n_g (n_g = 2); fused = sum_g w_g grad_g / 5.
    expected = [4 * (-0.5 / 2) / 5, 4 * (0.5 / 2) / 5, 1 * (-0.5 / 2) / 5, 1 * (0.5 / 2) / 5]
    assert [float(p.grad) for p in logprobs] == pytest.approx(expected)


def test_every_group_at_one_weight_is_plain_grpo_whatever_the_weight() -> None:
    plain = group_advantages([GroupScore([1.0, 0.0, 0.5], ANCHOR), GroupScore([0.2, 0.9], ANCHOR)])
    fallen_back = group_advantages(
        [GroupScore([1.0, 0.0, 0.5], ANCHOR, weight=4.0), GroupScore([0.2, 0.9], ANCHOR, weight=4.0)]
    )
    assert fallen_back == plain


@settings(max_examples=40, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 5), min_size=1, max_size=6),
    advantages=st.lists(st.floats(-3, 3), min_size=6, max_size=6),
    split=st.integers(1, 5),
    loss_type=st.sampled_from(["grpo", "dr_grpo"]),
)
def test_micro_batches_sum_to_the_full_batch_loss_and_on_policy_it_is_minus_the_mean_advantage(
    lengths: list[int], advantages: list[float], split: int, loss_type: str
) -> None:
    gen = torch.Generator().manual_seed(sum(lengths))
    logprobs = [-torch.rand(n, generator=gen, dtype=torch.float64) for n in lengths]
    entropy = [torch.rand(n, generator=gen, dtype=torch.float64) for n in lengths]
    adv = advantages[: len(lengths)]
    kwargs = {"kl_coef": 0.04, "entropy_coef": 0.002, "loss_type": loss_type, "max_tokens": 5}
    full, _ = grpo_loss(logprobs, logprobs, logprobs, entropy, adv, **kwargs)
    parts = sum(
        float(
            grpo_loss(
                *(x[i : i + split] for x in (logprobs, logprobs, logprobs, entropy, adv)),
                **kwargs,
                n_sequences=len(lengths),
            )[0]
        )
        for i in range(0, len(lengths), split)
    )
    assert parts == pytest.approx(full.item(), abs=1e-9)
    # On policy (ratio 1, reference = policy), only the advantage and the entropy bonus remain.
    scale = [1 / n if loss_type == "grpo" else 1 / 5 for n in lengths]
    expected = sum(s * (-a * n - 0.002 * float(e.sum())) for s, a, n, e in zip(scale, adv, lengths, entropy)) / len(
        lengths
    )
    assert full.item() == pytest.approx(expected, abs=1e-9)


def test_mismatched_inputs_are_refused_with_what_was_wrong() -> None:
    one = [torch.zeros(2)]
    with pytest.raises(ValueError, match="one entry per trajectory"):
        grpo_loss(one, one, one, one, [1.0, 2.0])
    with pytest.raises(ValueError, match="same length"):
        grpo_loss(one, [torch.zeros(3)], one, one, [1.0])
    with pytest.raises(ValueError, match="loss_type"):
        grpo_loss(one, one, one, one, [1.0], loss_type="ppo")
