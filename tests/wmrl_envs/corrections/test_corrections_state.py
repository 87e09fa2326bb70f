"""Save and restore: a resumed run continues exactly like an uninterrupted one; a corrupt state names its bad key."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wmrl_envs.corrections import (
    AnchorScheduler,
    FallbackConfig,
    FallbackRule,
    InverseVarianceWeighter,
    OnlineDebiaser,
    StateDictError,
    mean_rank_correlation,
)


def _through_json(state: dict) -> dict:
    return json.loads(json.dumps(state, allow_nan=False))


class _Pipeline:
    """The four corrections wired as a trainer would; `step` returns everything a step decides."""

    def __init__(self) -> None:
        self.scheduler = AnchorScheduler(fraction=0.1, seed=11)
        self.debiaser = OnlineDebiaser(min_pairs=40, refit_every=16, window=120)
        self.weighter = InverseVarianceWeighter(window=8)
        self.rule = FallbackRule(FallbackConfig(rank_window=4, min_rank_observations=2, recovery_patience=3))

    def step(self, step: int, n_groups: int = 12, group_size: int = 6) -> dict:
        rng = np.random.default_rng(step)  # data is a function of the step, as a replayed rollout batch would be
        real = rng.random((n_groups, group_size))
        # The world model turns anti-correlated for steps 15-24, so a run crosses fallback states and recovers.
        predicted = (1.0 - real if 15 <= step < 25 else np.sqrt(real)) + rng.normal(0.0, 0.05, real.shape)
        anchors = self.scheduler.choose(n_groups, step)
        self.debiaser.add(predicted[anchors], real[anchors])
        calibrated = self.debiaser.transform(predicted)
        for g in anchors if self.debiaser.is_fitted else ():
            self.weighter.observe(calibrated[g], real[g])
        decision = self.rule.update(
            error_reduction=self.debiaser.error_reduction(),
            rank_correlation=mean_rank_correlation((calibrated[g], real[g]) for g in anchors),
            residual_variance=self.weighter.residual_variance,
        )
        self.scheduler.fraction = decision.anchor_fraction
        return {
            "anchors": anchors,
            "calibrated": calibrated.tolist(),
            "anchor_weight": decision.anchor_weight(self.weighter.anchor_weight),
            "decision": decision.as_dict(),
        }

    def state_dict(self) -> dict:
        return {name: getattr(self, name).state_dict() for name in ("scheduler", "debiaser", "weighter", "rule")}

    @classmethod
    def from_state_dict(cls, state: dict) -> _Pipeline:
        pipeline = cls()
        pipeline.scheduler = AnchorScheduler.from_state_dict(state["scheduler"])
        pipeline.debiaser = OnlineDebiaser.from_state_dict(state["debiaser"])
        pipeline.weighter = InverseVarianceWeighter.from_state_dict(state["weighter"])
        pipeline.rule = FallbackRule.from_state_dict(state["rule"])
        return pipeline


@settings(max_examples=10, deadline=None)
@given(stop=st.integers(min_value=0, max_value=40))
def test_a_restored_run_continues_exactly_like_an_uninterrupted_one(stop):
    uninterrupted = _Pipeline()
    expected = [uninterrupted.step(step) for step in range(45)]
    interrupted = _Pipeline()
    for step in range(stop):
        interrupted.step(step)
    resumed = _Pipeline.from_state_dict(_through_json(interrupted.state_dict()))
    assert [resumed.step(step) for step in range(stop, 45)] == expected[stop:]
    assert resumed.state_dict() == uninterrupted.state_dict()


def _trained_objects() -> list:
    pipeline = _Pipeline()
    for step in range(40):
        pipeline.step(step)
    return [pipeline.scheduler, pipeline.debiaser, pipeline.weighter, pipeline.rule]


@pytest.mark.parametrize("index", range(4))
def test_state_dicts_are_json_and_round_trip_into_an_existing_object(index):
    original = _trained_objects()[index]
    state = original.state_dict()
    assert _through_json(state) == state
    fresh = type(original)()
    fresh.load_state_dict(_through_json(state))
    assert fresh.state_dict() == state


_CORRUPTIONS = [
    ("kind", "SomethingElse", "'kind'"),
    ("version", 99, "'version'"),
    ("scheduler.credit", 1.5, "'credit'"),
    ("scheduler.total_anchors", -1, "'total_anchors'"),
    ("scheduler.seed", "eleven", "'seed'"),
    ("debiaser.n_pairs", 5, "'predicted' and 'real'"),
    ("debiaser.fit_at", 7, "'fit_at'"),
    ("debiaser.real", [0.1, float("nan")], "'real'"),
    ("debiaser.map_x", None, "'map_x'"),
    ("debiaser.window", 1, "'window'"),
    ("weighter.residual_ss", "many", "'residual_ss'"),
    ("weighter.real_ss", [], "'residual_ss'/'real_ss'"),
    ("weighter.max_weight", 0.5, "'min_weight'/'max_weight'"),
    ("rule.state", "confused", "'state'"),
    ("rule.config", {"rank_window": 0}, "'config'"),
    ("rule.config", {"surprise": 1}, "'config' has unknown field"),
    ("rule.ranks", [2.0], "'ranks'"),
]
_NAMES = {"scheduler": 0, "debiaser": 1, "weighter": 2, "rule": 3}


@pytest.mark.parametrize("target, value, message", _CORRUPTIONS)
def test_a_corrupt_state_names_the_bad_key_and_changes_nothing(target, value, message):
    objects = _trained_objects()
    names = [target.split(".")[0]] if "." in target else list(_NAMES)
    key = target.split(".")[-1]
    for name in names:
        obj = objects[_NAMES[name]]
        state = obj.state_dict()
        before = json.dumps(state)
        with pytest.raises(StateDictError, match=message):
            obj.load_state_dict({**state, key: value})
        with pytest.raises(StateDictError, match=message):
            type(obj).from_state_dict({**state, key: value})
        assert json.dumps(obj.state_dict()) == before


@pytest.mark.parametrize("index", range(4))
def test_a_missing_key_or_a_non_dict_is_reported(index):
    obj = _trained_objects()[index]
    state = obj.state_dict()
    key = min(set(state) - {"kind", "version"})
    with pytest.raises(StateDictError, match=f"key '{key}' is missing"):
        obj.load_state_dict({k: v for k, v in state.items() if k != key})
    with pytest.raises(StateDictError, match="must be a dict"):
        obj.load_state_dict([1, 2, 3])
