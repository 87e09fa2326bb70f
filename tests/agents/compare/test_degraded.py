"""World models of controlled quality: the bias keeps the order, the noise is per program and reproducible."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st
from wmrl_agents.compare.degraded import QUALITY_LEVELS, DegradedPredictor, Quality

from wmrl_envs.world_models.base import PredictedStatus, Prediction


@dataclass(frozen=True)
class _Task:
    id: str


class _Reads:
    """A predictor whose answer is written in the program (``# p=0.4``), as a perfect world model would know it."""

    def predict(self, competition: _Task, code: str) -> Prediction | None:
        if code == "no answer":
            return None
        if code == "crashes":
            return Prediction(status=PredictedStatus.CRASHES)
        return Prediction(position=float(code.split("=")[1]))


unit = st.floats(min_value=0.0, max_value=1.0)


@given(unit, unit)
def test_the_bias_keeps_the_order_so_an_isotonic_map_can_undo_it(a: float, b: float) -> None:
    biased = DegradedPredictor(_Reads(), Quality("bias", exponent=3.0))
    pa, pb = (biased.predict(_Task("t"), f"# p={x}").position for x in (a, b))  # type: ignore[union-attr]
    assert (pa - pb) * (a - b) >= 0 and 0.0 <= pa <= 1.0
    assert pa == pytest.approx(a**3)


@given(unit, st.integers(min_value=0, max_value=5))
def test_noise_is_fixed_per_program_and_seed_and_stays_a_position(p: float, seed: int) -> None:
    noisy = DegradedPredictor(_Reads(), Quality("noise", noise=0.2), seed=seed)
    first = noisy.predict(_Task("t"), f"# p={p}")
    assert first == noisy.predict(_Task("t"), f"# p={p}")
    assert 0.0 <= first.position <= 1.0  # type: ignore[union-attr, operator]


def test_noise_has_the_asked_spread_across_programs() -> None:
    noisy = DegradedPredictor(_Reads(), Quality("noise", noise=0.2))
    errors = [noisy.predict(_Task(f"t{i}"), "# p=0.5").position - 0.5 for i in range(400)]  # type: ignore[operator]
    spread = (sum(e * e for e in errors) / len(errors)) ** 0.5
    assert 0.15 < spread < 0.22  # 0.2, a little less where 0 and 1 clip it


def test_unanswered_and_invalid_predictions_pass_unchanged() -> None:
    worse = DegradedPredictor(_Reads(), QUALITY_LEVELS[-1])
    assert worse.predict(_Task("t"), "no answer") is None
    assert worse.predict(_Task("t"), "crashes") == Prediction(status=PredictedStatus.CRASHES)


def test_impossible_qualities_are_refused() -> None:
    with pytest.raises(ValueError, match="exponent must be > 0"):
        Quality("bad", exponent=0.0)
    with pytest.raises(ValueError, match="noise >= 0"):
        Quality("bad", noise=-0.1)
