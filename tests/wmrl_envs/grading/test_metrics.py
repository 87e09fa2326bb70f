"""Metrics against hand-computed values, and the invariants every Kaggle metric must keep."""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wmrl_envs.grading.metrics import ALIASES, METRICS, UnknownMetricError, compute_metric, get_metric

Frames = tuple[pd.DataFrame, pd.DataFrame]


def col(values: list, name: str = "y") -> pd.DataFrame:
    return pd.DataFrame({name: values})


def frame(rows: list[list[float]], columns: str = "abc") -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(columns[: len(rows[0])]))


# --- registry -----------------------------------------------------------------------------------


def test_registry_has_exactly_the_documented_keys():
    assert set(METRICS) == {
        "accuracy", "roc_auc", "mean_column_roc_auc", "log_loss", "multiclass_log_loss", "rmse", "rmsle",
        "mean_column_rmsle", "r2", "mae", "quadratic_weighted_kappa", "normalized_gini", "smape", "f1",
        "f1_macro", "map_at_k",
    }  # fmt: skip
    assert all(name == metric.name for name, metric in METRICS.items())
    assert all(ALIASES[a] in METRICS for a in ALIASES)


def test_unknown_metric_is_a_key_error_that_lists_the_known_names():
    with pytest.raises(KeyError) as info:
        get_metric("aucroc")
    assert isinstance(info.value, UnknownMetricError)
    assert "'aucroc'" in str(info.value) and "roc_auc" in str(info.value) and "map_at_k" in str(info.value)


def test_every_reference_task_metric_resolves_with_its_declared_direction(reference_dir):
    for task_json in sorted(reference_dir.glob("*/task.json")):
        task = json.loads(task_json.read_text())
        metric = get_metric(task["metric"])
        assert metric.higher_is_better == task["higher_is_better"], task["competition_id"]


# --- hand-computed values -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "y_true", "y_pred", "kwargs", "expected"),
    [
        ("accuracy", col([1, 2, 3, 4]), col([1, 2, 0, 4]), {}, 0.75),
        ("accuracy", col([True, False, True, False]), col(["true", "False", "1", "1"]), {}, 0.75),
        ("roc_auc", col([0, 0, 1, 1]), col([0.1, 0.4, 0.35, 0.8]), {}, 0.75),
        ("roc_auc", col([0, 1]), col([0.5, 0.5]), {}, 0.5),
        ("roc_auc", col([False, True, True]), col([0.2, 0.9, 0.1]), {}, 0.5),
        ("mean_column_roc_auc", frame([[0, 1], [1, 0]]), frame([[0.2, 0.9], [0.7, 0.1]]), {}, 1.0),
        ("mean_column_roc_auc", frame([[0, 1], [1, 0]]), frame([[0.2, 0.1], [0.7, 0.9]]), {}, 0.5),
        ("log_loss", col([1, 0]), col([0.8, 0.3]), {}, -(math.log(0.8) + math.log(0.7)) / 2),
        ("log_loss", col([0]), col([1.0]), {}, -math.log(1 - (1 - 1e-15))),  # 1 - p after clipping
        ("multiclass_log_loss", frame([[1, 0, 0]]), frame([[2.0, 1.0, 1.0]]), {}, math.log(2)),
        ("multiclass_log_loss", frame([[0, 1, 0]]), frame([[0.0, 0.0, 0.0]]), {}, math.log(3)),
        ("multiclass_log_loss", frame([[0, 0, 1]]), frame([[1.0, 0.0, 0.0]]), {}, -math.log(1e-15)),
        ("rmse", col([1, 2, 3]), col([1, 2, 5]), {}, math.sqrt(4 / 3)),
        ("rmsle", col([0.0]), col([math.e - 1]), {}, 1.0),
        ("mean_column_rmsle", frame([[0.0, 2.0]]), frame([[math.e - 1, 2.0]]), {}, 0.5),
        ("r2", col([1, 2, 3]), col([1, 2, 4]), {}, 0.5),
        ("r2", col([2, 2]), col([2, 2]), {}, 1.0),
        ("mae", col([1, 2, 3]), col([2, 2, 1]), {}, 1.0),
        ("quadratic_weighted_kappa", col([1, 2]), col([2, 1]), {}, -1.0),
        ("quadratic_weighted_kappa", col([1, 1, 2, 2]), col([1, 2, 1, 2]), {}, 0.0),
        ("quadratic_weighted_kappa", col([3, 3]), col([3, 3]), {}, 1.0),
        ("normalized_gini", col([0, 0, 1, 1]), col([0.1, 0.4, 0.35, 0.8]), {}, 0.5),
        ("normalized_gini", col([1.0, 2.0, 3.0]), col([3.0, 2.0, 1.0]), {}, -1.0),
        ("smape", col([100.0, 0.0]), col([110.0, 0.0]), {}, 100 * (20 / 210) / 2),
        ("smape", col([0.0]), col([5.0]), {}, 200.0),
        ("smape", col([0.0, 0.0]), col([0.0, 0.0]), {}, 0.0),
        ("f1", col([1, 1, 0, 0]), col([1, 0, 1, 0]), {}, 0.5),
        ("f1", col(["a", "b", "b"]), col(["b", "b", "a"]), {"pos_label": "b"}, 0.5),
        ("f1", col([True, False]), col(["true", "true"]), {"pos_label": True}, 2 / 3),
        ("f1_macro", col(["a", "a", "b"]), col(["a", "b", "b"]), {}, 2 / 3),
        # Kaggle wiki examples of AP@10: relevant #1 and #3 out of 3, and out of 2.
        ("map_at_k", col(["A B C"]), col(["A X B"]), {"k": 10}, (1 + 2 / 3) / 3),
        ("map_at_k", col(["A B"]), col(["A X B"]), {"k": 10}, (1 + 2 / 3) / 2),
        ("map_at_k", col(["A B"]), col(["A A"]), {}, 0.5),
        ("map_at_k", col(["A"]), col(["X A"]), {"k": 1}, 0.0),
        ("map_at_k", col(["", "A"]), col(["A", "A"]), {}, 0.5),
        ("map_at_k", col(["A B C D E F"]), col(["A B C D E"]), {}, 1.0),
    ],
)
def test_metric_matches_hand_computed_value(name, y_true, y_pred, kwargs, expected):
    assert compute_metric(name, y_true, y_pred, **kwargs) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_kappa_spaces_ratings_by_value_even_when_a_rating_is_unused():
    # Ratings 1, 2, 4 (3 unused): Kaggle's weights run over 1..4, so 1-vs-4 costs 9, not 4 as by rank.
    from sklearn.metrics import cohen_kappa_score

    a, b = [1, 2, 4, 4, 1], [2, 2, 4, 1, 1]
    value = compute_metric("quadratic_weighted_kappa", col(a), col(b))
    assert value == pytest.approx(cohen_kappa_score(a, b, weights="quadratic", labels=[1, 2, 3, 4]))
    assert value == pytest.approx(0.375)
    assert value != pytest.approx(cohen_kappa_score(a, b, weights="quadratic"))


def test_auc_needs_both_classes():
    with pytest.raises(ValueError, match="only one class"):
        compute_metric("roc_auc", col([1, 1]), col([0.2, 0.3]))


def test_numeric_metric_rejects_text_and_missing_values():
    with pytest.raises(ValueError, match="non-numeric"):
        compute_metric("rmse", col([1.0]), col(["abc"]))
    with pytest.raises(ValueError, match="missing"):
        compute_metric("rmse", col([1.0, 2.0]), col([1.0, None]))


def test_single_column_metric_rejects_several_columns():
    with pytest.raises(ValueError, match="one target column"):
        compute_metric("rmse", frame([[1.0, 2.0]]), frame([[1.0, 2.0]]))


def test_rows_must_already_be_aligned():
    with pytest.raises(ValueError, match="align"):
        compute_metric("rmse", col([1.0, 2.0]), col([1.0]))


# --- invariants ---------------------------------------------------------------------------------


def _binary(rng: np.random.Generator, n: int) -> np.ndarray:
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]  # both classes, so AUC is defined
    return y


def _samples(name: str, rng: np.random.Generator, n: int) -> Frames:
    """Random answers and predictions shaped the way `name` expects."""
    if name in ("accuracy", "f1", "f1_macro", "quadratic_weighted_kappa"):
        return col(rng.integers(1, 6, n).tolist()), col(rng.integers(1, 6, n).tolist())
    if name in ("roc_auc", "log_loss", "normalized_gini"):
        return col(_binary(rng, n).tolist()), col(rng.random(n).round(2).tolist())
    if name == "mean_column_roc_auc":
        truth = pd.DataFrame({"a": _binary(rng, n), "b": _binary(rng, n)})
        return truth, pd.DataFrame({"a": rng.random(n), "b": rng.random(n)})
    if name == "multiclass_log_loss":
        truth = np.eye(3)[rng.integers(0, 3, n)]
        return pd.DataFrame(truth, columns=list("abc")), pd.DataFrame(rng.random((n, 3)), columns=list("abc"))
    if name == "mean_column_rmsle":
        truth, pred = rng.random((2, n, 2)) * 5
        return pd.DataFrame(truth, columns=["a", "b"]), pd.DataFrame(pred, columns=["a", "b"])
    if name == "map_at_k":

        def draw() -> str:
            return " ".join(rng.choice(list("ABCDEFG"), rng.integers(0, 6), replace=False))

        return col([draw() for _ in range(n)]), col([draw() for _ in range(n)])
    return col((rng.random(n) * 10).tolist()), col((rng.random(n) * 10).tolist())


BEST = {
    "accuracy": 1.0, "roc_auc": 1.0, "mean_column_roc_auc": 1.0, "log_loss": 0.0, "multiclass_log_loss": 0.0,
    "rmse": 0.0, "rmsle": 0.0, "mean_column_rmsle": 0.0, "r2": 1.0, "mae": 0.0, "quadratic_weighted_kappa": 1.0,
    "normalized_gini": 1.0, "smape": 0.0, "f1": 1.0, "f1_macro": 1.0, "map_at_k": 1.0,
}  # fmt: skip

seeds = st.integers(0, 2**32 - 1)
sizes = st.integers(3, 40)
fast = settings(max_examples=25, deadline=None)


def test_best_values_cover_the_registry():
    assert set(BEST) == set(METRICS)


@pytest.mark.parametrize("name", sorted(METRICS))
@fast
@given(seed=seeds, n=sizes)
def test_perfect_prediction_gets_the_best_value(name, seed, n):
    y_true, _ = _samples(name, np.random.default_rng(seed), n)
    if name == "map_at_k":
        y_true = col([s or "A" for s in y_true["y"]])  # a row with nothing to find scores 0 by definition
    value = compute_metric(name, y_true, y_true.copy())
    assert value == pytest.approx(BEST[name], abs=1e-9)


@pytest.mark.parametrize("name", sorted(METRICS))
@fast
@given(seed=seeds, n=sizes)
def test_metric_values_stay_inside_their_bounds(name, seed, n):
    y_true, y_pred = _samples(name, np.random.default_rng(seed), n)
    lo, hi = METRICS[name].bounds
    assert lo - 1e-9 <= compute_metric(name, y_true, y_pred) <= hi + 1e-9


@pytest.mark.parametrize("name", sorted(METRICS))
@fast
@given(seed=seeds, n=sizes, data=st.data())
def test_metrics_are_invariant_to_row_order(name, seed, n, data):
    y_true, y_pred = _samples(name, np.random.default_rng(seed), n)
    order = data.draw(st.permutations(range(n)))
    shuffled = compute_metric(name, y_true.iloc[order], y_pred.iloc[order])
    assert shuffled == pytest.approx(compute_metric(name, y_true, y_pred), rel=1e-9, abs=1e-12)


MONOTONE: list[Callable[[np.ndarray], np.ndarray]] = [np.exp, lambda s: 3 * s - 7, lambda s: s**3, np.arctan]


@fast
@given(seed=seeds, n=sizes, which=st.integers(0, len(MONOTONE) - 1))
def test_auc_is_invariant_under_monotone_transforms_of_predictions(seed, n, which):
    y_true, y_pred = _samples("roc_auc", np.random.default_rng(seed), n)
    transformed = col(MONOTONE[which](y_pred["y"].to_numpy()).tolist())
    assert compute_metric("roc_auc", y_true, transformed) == pytest.approx(compute_metric("roc_auc", y_true, y_pred))


@fast
@given(seed=seeds, n=sizes)
def test_gini_is_two_auc_minus_one_for_binary_answers(seed, n):
    y_true, y_pred = _samples("roc_auc", np.random.default_rng(seed), n)
    auc = compute_metric("roc_auc", y_true, y_pred)
    assert compute_metric("normalized_gini", y_true, y_pred) == pytest.approx(2 * auc - 1, abs=1e-9)


@fast
@given(values=st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=30))
def test_rmsle_of_a_column_against_itself_is_zero(values):
    assert compute_metric("rmsle", col(values), col(values)) == 0.0


@fast
@given(seed=seeds, n=sizes)
def test_kappa_is_symmetric_in_its_raters(seed, n):
    a, b = _samples("quadratic_weighted_kappa", np.random.default_rng(seed), n)
    assert compute_metric("quadratic_weighted_kappa", a, b) == pytest.approx(
        compute_metric("quadratic_weighted_kappa", b, a)
    )
