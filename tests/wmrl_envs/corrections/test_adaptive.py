"""AdaptiveAnchorFraction: the square-root allocation from measured noise and costs, bounded, resumable."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wmrl_envs.corrections import AdaptiveAnchorFraction, StateDictError

positive = st.floats(min_value=1e-3, max_value=1e3)


def test_the_fraction_by_hand() -> None:
    adaptive = AdaptiveAnchorFraction(min_fraction=0.02, cost_smoothing=0.0)
    assert adaptive.fraction(0.5, recommended=0.1, healthy=True) == 0.1  # costs not measured yet
    adaptive.observe_costs(real_s=8.0, world_model_s=0.5)
    assert adaptive.optimal(None) is None
    assert adaptive.fraction(0.5, recommended=0.1, healthy=True) == pytest.approx(math.sqrt(0.5 * 0.5 / 8))  # 0.177
    assert adaptive.fraction(0.0, recommended=0.1, healthy=True) == 0.02  # a perfect world model: the floor
    assert adaptive.fraction(0.5, recommended=0.25, healthy=False) == 0.25  # the fallback's floor while degraded


@given(s2=st.floats(0, 10), more=st.floats(0, 10), real=positive, wm=positive, dearer=st.floats(1, 100))
def test_more_noise_asks_for_more_anchors_and_dearer_real_runs_for_fewer(s2, more, real, wm, dearer) -> None:
    adaptive = AdaptiveAnchorFraction(min_fraction=0.01, cost_smoothing=0.0)
    adaptive.observe_costs(real, wm)
    low, high = adaptive.optimal(s2), adaptive.optimal(s2 + more)
    assert 0.01 <= low <= high <= 1.0
    adaptive.observe_costs(real * dearer, wm)
    assert adaptive.optimal(s2) <= low


@given(s2=st.floats(0, 10), real=positive, wm=positive)
def test_a_declared_cost_ratio_ignores_the_measured_seconds(s2, real, wm) -> None:
    declared = AdaptiveAnchorFraction(min_fraction=0.01, cost_ratio=0.1)
    before = declared.optimal(s2)
    declared.observe_costs(real, wm)
    assert declared.optimal(s2) == before == min(max(math.sqrt(s2 * 0.1), 0.01), 1.0)
    assert declared.diagnostics()["cost_ratio"] == 0.1 and declared.diagnostics()["cost_ratio_declared"]


def test_a_declared_ratio_resumes_and_bad_ratios_are_refused() -> None:
    declared = AdaptiveAnchorFraction(cost_ratio=0.25)
    assert AdaptiveAnchorFraction.from_state_dict(declared.state_dict()).cost_ratio == 0.25
    old = {k: v for k, v in AdaptiveAnchorFraction().state_dict().items() if k != "cost_ratio"}
    assert AdaptiveAnchorFraction.from_state_dict(old).cost_ratio is None  # states saved before the option
    with pytest.raises(StateDictError, match="cost_ratio"):
        AdaptiveAnchorFraction.from_state_dict({**declared.state_dict(), "cost_ratio": 0.0})
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="cost_ratio"):
            AdaptiveAnchorFraction(cost_ratio=bad)


def test_costs_are_smoothed_and_the_state_resumes() -> None:
    adaptive = AdaptiveAnchorFraction(cost_smoothing=0.5)
    adaptive.observe_costs(real_s=4.0, world_model_s=1.0)
    adaptive.observe_costs(real_s=8.0, world_model_s=None)
    assert adaptive.diagnostics() == {
        "real_s_per_rollout": 6.0,
        "world_model_s_per_rollout": 1.0,
        "cost_ratio": 1.0 / 6.0,
        "cost_ratio_declared": False,
    }
    copy = AdaptiveAnchorFraction.from_state_dict(adaptive.state_dict())
    assert copy.state_dict() == adaptive.state_dict()
    with pytest.raises(StateDictError, match="real_s"):
        AdaptiveAnchorFraction.from_state_dict({**adaptive.state_dict(), "real_s": -1.0})
    with pytest.raises(ValueError, match="min_fraction"):
        AdaptiveAnchorFraction(min_fraction=0.0)
