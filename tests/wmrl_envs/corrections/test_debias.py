"""OnlineDebiaser: identity until enough pairs, exact refit cadence, a monotone map (steps, or centred and strictly
increasing), NaN never in or out."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.isotonic import IsotonicRegression

from wmrl_envs.corrections import OnlineDebiaser
from wmrl_envs.corrections.debias import MAP_KINDS
from wmrl_envs.corrections.state import StateDictError

scores = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
pair_lists = st.lists(st.tuples(scores, scores), min_size=1, max_size=60)
unit = st.integers(min_value=0, max_value=1000).map(lambda k: k / 1000)
"""Scores on a grid of 0.001: distinct queries are far enough apart for floats to tell their images apart."""
unit_pair_lists = st.lists(st.tuples(unit, unit), min_size=1, max_size=60)


def _fitted(pairs: list[tuple[float, float]], map_kind: str = "steps") -> OnlineDebiaser:
    debiaser = OnlineDebiaser(min_pairs=1, refit_every=1, map_kind=map_kind)
    predicted, real = zip(*pairs, strict=True)
    debiaser.add(list(predicted), list(real))
    return debiaser


@pytest.mark.parametrize("map_kind", MAP_KINDS)
@settings(max_examples=150, deadline=None)
@given(pairs=pair_lists, queries=st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=50))
def test_transform_is_monotone_and_finite_for_any_fitted_data(map_kind, pairs, queries):
    debiaser = _fitted(pairs, map_kind)
    assert debiaser.is_fitted
    query = np.sort(np.asarray(queries))
    out = debiaser.transform(query)
    assert np.isfinite(out).all()
    assert np.all(np.diff(out) >= 0.0)


@pytest.mark.parametrize("map_kind", MAP_KINDS)
@settings(max_examples=100, deadline=None)
@given(pairs=pair_lists, queries=st.lists(scores, min_size=1, max_size=20))
def test_any_fitted_map_survives_a_json_round_trip(map_kind, pairs, queries):
    debiaser = _fitted(pairs, map_kind)
    restored = OnlineDebiaser.from_state_dict(json.loads(json.dumps(debiaser.state_dict())))
    np.testing.assert_array_equal(restored.transform(queries), debiaser.transform(queries))
    assert restored.error_reduction() == debiaser.error_reduction()


@settings(max_examples=100, deadline=None)
@given(pairs=pair_lists, beyond=st.floats(min_value=0.0, max_value=1e300))
def test_step_map_clips_out_of_range_inputs_to_its_ends(pairs, beyond):
    debiaser = _fitted(pairs)
    predicted = np.array([p for p, _ in pairs])
    low, high = debiaser.transform(predicted.min()), debiaser.transform(predicted.max())
    assert debiaser.transform(predicted.min() - beyond) == low
    assert debiaser.transform(predicted.max() + beyond) == high
    real = np.array([r for _, r in pairs])
    assert real.min() <= low <= high <= real.max()


@settings(max_examples=50, deadline=None)
@given(pairs=st.lists(st.tuples(scores, scores), min_size=1, max_size=199), query=scores)
def test_transform_is_identity_before_min_pairs(pairs, query):
    debiaser = OnlineDebiaser()
    predicted, real = zip(*pairs, strict=True)
    assert debiaser.add(list(predicted), list(real)) is False
    assert not debiaser.is_fitted
    assert debiaser.transform(query) == query
    np.testing.assert_array_equal(debiaser.transform(np.array(predicted)), np.array(predicted))


def test_refits_happen_exactly_at_200_264_328_pairs():
    debiaser = OnlineDebiaser()
    rng = np.random.default_rng(0)
    refit_points = [debiaser.n_pairs for _ in range(600) if debiaser.add(*rng.random(2))]
    assert refit_points == [200, 264, 328, 392, 456, 520, 584]
    assert debiaser.n_fits == len(refit_points)
    assert debiaser.diagnostics()["next_fit_at"] == 648


@settings(max_examples=40, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=6), window=st.sampled_from([None, 50, 150]))
def test_adding_in_batches_gives_the_same_map_as_pair_by_pair(cuts, window):
    rng = np.random.default_rng(1)
    predicted, real = rng.random(400), rng.random(400) ** 2
    one_by_one = OnlineDebiaser(window=window)
    for p, r in zip(predicted, real, strict=True):
        one_by_one.add(p, r)
    batched = OnlineDebiaser(window=window)
    bounds = [0, *sorted(cuts), 400]
    for lo, hi in itertools.pairwise(bounds):
        batched.add(predicted[lo:hi], real[lo:hi])
    assert batched.state_dict() == one_by_one.state_dict()


def test_fitted_map_matches_sklearn_isotonic_regression():
    rng = np.random.default_rng(2)
    predicted = rng.random(300)
    real = predicted**3 + rng.normal(0, 0.05, 300)
    debiaser = OnlineDebiaser()
    debiaser.add(predicted[:200], real[:200])
    reference = IsotonicRegression(out_of_bounds="clip").fit(predicted[:200], real[:200])
    query = np.linspace(-0.5, 1.5, 1001)
    np.testing.assert_allclose(debiaser.transform(query), reference.predict(query), rtol=0, atol=1e-12)


def test_scalar_in_gives_float_out_and_array_keeps_its_shape():
    debiaser = _fitted([(0.0, 0.0), (1.0, 1.0)])
    assert type(debiaser.transform(0.5)) is float
    assert type(debiaser.transform(np.float32(0.5))) is float
    assert debiaser.transform(np.zeros((2, 3))).shape == (2, 3)
    assert debiaser.transform([]).shape == (0,)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_pairs_are_rejected_and_nothing_is_added(bad):
    debiaser = OnlineDebiaser(min_pairs=2)
    debiaser.add([0.1], [0.2])
    before = debiaser.state_dict()
    with pytest.raises(ValueError, match="NaN or infinite"):
        debiaser.add([0.3, bad], [0.4, 0.5])
    with pytest.raises(ValueError, match="NaN or infinite"):
        debiaser.add([0.3, 0.4], [bad, 0.5])
    assert debiaser.state_dict() == before


@pytest.mark.parametrize("fitted", [False, True])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input_to_transform_raises_instead_of_returning_nan(fitted, bad):
    debiaser = _fitted([(0.0, 0.0), (1.0, 1.0)]) if fitted else OnlineDebiaser()
    with pytest.raises(ValueError, match="NaN or infinite"):
        debiaser.transform([0.5, bad])
    with pytest.raises(ValueError, match="NaN or infinite"):
        debiaser.transform(bad)


def test_empty_add_is_a_no_op_and_mismatched_shapes_raise():
    debiaser = OnlineDebiaser()
    assert debiaser.add([], []) is False
    assert debiaser.n_pairs == 0
    with pytest.raises(ValueError, match="same shape"):
        debiaser.add([0.1, 0.2], [0.1])
    with pytest.raises(ValueError, match="must be numbers"):
        debiaser.add([None], [0.1])


def test_window_lets_the_map_follow_a_drifting_world_model():
    rng = np.random.default_rng(3)
    windowed, unwindowed = OnlineDebiaser(window=256), OnlineDebiaser()
    for shift in (0.0, 0.5):  # the world model starts over-predicting by 0.5
        real = rng.random(512)
        for debiaser in (windowed, unwindowed):
            debiaser.add(real + shift, real)
    probe = np.linspace(0.6, 1.4, 9)
    np.testing.assert_allclose(windowed.transform(probe), probe - 0.5, atol=0.02)
    assert np.max(np.abs(unwindowed.transform(probe) - (probe - 0.5))) > 0.1


def test_error_reduction_shows_what_the_map_removes(groups):
    debiaser = OnlineDebiaser()
    assert debiaser.error_reduction() is None
    stream = groups(lambda r: np.expm1(2 * r))
    while debiaser.n_pairs < 200:
        debiaser.add(*next(stream))
    diagnostics = debiaser.diagnostics()
    assert diagnostics["mse_calibrated"] < 0.05 * diagnostics["mse_raw"]
    assert debiaser.error_reduction() > 1.0


def test_error_reduction_is_about_zero_for_an_already_calibrated_world_model(groups):
    debiaser = OnlineDebiaser()
    stream = groups(lambda r: r)
    while debiaser.n_pairs < 400:
        debiaser.add(*next(stream))
    assert abs(debiaser.error_reduction()) < 0.05


@pytest.mark.parametrize(
    "kwargs",
    [{"min_pairs": 0}, {"refit_every": 0}, {"window": 1}, {"min_pairs": 2.5}, {"refit_every": True}, {"map_kind": "x"}],
)
def test_invalid_configuration_is_rejected(kwargs):
    with pytest.raises(ValueError, match="OnlineDebiaser"):
        OnlineDebiaser(**kwargs)


@settings(max_examples=150, deadline=None)
@given(pairs=unit_pair_lists, queries=st.lists(unit, min_size=2, max_size=40))
def test_centred_map_ties_scores_only_at_the_range_edges_or_when_the_fit_is_constant(pairs, queries):
    # A tie within a group is a zero advantage: the centred map keeps every ranking the world model gives.
    debiaser = _fitted(pairs, "centred")
    query = np.unique(queries)
    out = debiaser.transform(query)
    constant = len(set(IsotonicRegression().fit_transform(*zip(*pairs, strict=True)))) == 1
    tied = np.flatnonzero(np.diff(out) == 0)
    assert constant or all(out[i] in (0.0, 1.0) for i in tied)
    assert np.all((0.0 <= out) & (out <= 1.0))


def test_step_map_ties_predictions_within_a_block_and_centred_map_keeps_their_order():
    predicted = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    real = [0.1, 0.3, 0.2, 0.5, 0.4, 0.9]  # two blocks pool: (0.2, 0.3) and (0.4, 0.5)
    steps, centred = (
        _fitted(list(zip(predicted, real, strict=True))),
        _fitted(list(zip(predicted, real, strict=True)), "centred"),
    )
    group = [0.21, 0.29, 0.41, 0.49]
    assert len(set(steps.transform(group))) == 2
    assert np.all(np.diff(centred.transform(group)) > 0)
    # Above the best anchor the step map is flat; the centred map still ranks (and stays in the score range).
    assert steps.transform(0.7) == steps.transform(0.95) == 0.9
    assert 0.9 < centred.transform(0.7) < centred.transform(0.95) <= 1.0


def test_centred_map_is_a_better_calibration_out_of_sample_on_a_smooth_bias(groups):
    # Interpolating between block centres does not throw away the bias's shape inside a block.
    stream = groups(lambda r: r**2)
    steps, centred = OnlineDebiaser(), OnlineDebiaser(map_kind="centred")
    while steps.n_pairs < 200:
        pair = next(stream)
        steps.add(*pair)
        centred.add(*pair)
    assert centred.error_reduction() > steps.error_reduction() > 0


def test_a_state_without_a_map_kind_loads_as_the_step_map_and_a_bad_one_is_refused():
    state = _fitted([(0.0, 0.0), (0.5, 0.2), (1.0, 1.0)], "centred").state_dict()
    legacy = {k: v for k, v in state.items() if k != "map_kind"}
    assert OnlineDebiaser.from_state_dict(legacy).map_kind == "steps"
    with pytest.raises(StateDictError, match="map_kind"):
        OnlineDebiaser.from_state_dict({**state, "map_kind": "spline"})
