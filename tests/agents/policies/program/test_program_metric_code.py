"""The metric code rendered into solutions computes what the grader computes."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wmrl_agents.policies.program.metric_code import METRIC_BODIES, metric_function

from wmrl_envs.grading import METRICS, compute_metric


@functools.cache
def _holdout_score(metric: str):
    imports, code = metric_function(metric)
    namespace: dict = {"np": np, "pd": pd}
    for spec in imports:
        module, name = spec.split(":")
        namespace[name] = getattr(__import__(module, fromlist=[name]), name)
    exec(compile(code, f"<{metric}>", "exec"), namespace)  # noqa: S102 - the code a solution would run
    return namespace["holdout_score"]


def _data(metric: str, rng: np.random.Generator, n: int) -> tuple[pd.Series, object, pd.DataFrame, pd.DataFrame]:
    """(truth, guess) as a solution sees them, and the same as the grader's answer/prediction frames."""
    kind = METRICS[metric].kind
    if metric == "multiclass_log_loss":
        classes = ["a", "b", "c"]
        truth = pd.Series(rng.choice(classes, n))
        truth.iloc[:3] = classes  # every class present
        guess = pd.DataFrame(rng.dirichlet(np.ones(3), n), columns=classes)
        answers = pd.DataFrame({c: (truth == c).astype(int) for c in classes})
        return truth, guess, answers, guess
    if kind == "label":
        labels = [0, 1] if metric == "f1" else [1, 2, 3, 4]
        truth, guess = pd.Series(rng.choice(labels, n)), rng.choice(labels, n)
        truth.iloc[: len(labels)] = labels
    elif kind == "probability" or metric == "normalized_gini":
        truth, guess = pd.Series(rng.integers(0, 2, n)), rng.random(n)
        truth.iloc[:2] = [0, 1]
    else:
        truth, guess = pd.Series(rng.gamma(2.0, 3.0, n)), rng.gamma(2.0, 3.0, n)
    return truth, guess, pd.DataFrame({"y": truth}), pd.DataFrame({"y": guess})


def test_every_tabular_metric_has_holdout_code():
    tabular = {name for name, m in METRICS.items() if m.kind != "ranking"}
    assert tabular == set(METRIC_BODIES)


@pytest.mark.parametrize("metric", sorted(METRIC_BODIES))
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(12, 200))
def test_holdout_score_matches_the_grader(metric, seed, n):
    truth, guess, answers, predictions = _data(metric, np.random.default_rng(seed), n)
    expected = compute_metric(metric, answers, predictions)
    assert _holdout_score(metric)(truth, guess) == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_unknown_metric_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="no holdout code for metric 'map_at_k'.*accuracy"):
        metric_function("map_at_k")
