"""The world-model quality benchmark: its metrics keep their invariants, and a tiny run goes end to end for real."""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "benchmarks"))

import _world_model_metrics as metrics
import world_models

# Positions on a grid of hundredths: a monotone transform of them never rounds two into one float.
grid = st.integers(0, 100).map(lambda k: k / 100)
reals = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def paired(draw, min_size: int = 3, max_size: int = 30) -> tuple[list[float], list[float]]:
    n = draw(st.integers(min_size, max_size))
    return draw(st.lists(grid, min_size=n, max_size=n)), draw(st.lists(reals, min_size=n, max_size=n))


@given(st.lists(st.one_of(st.none(), grid), max_size=40))
def test_coverage_counts_none_as_not_covered(predicted) -> None:
    share = metrics.coverage(predicted)
    if not predicted:
        assert share is None
    else:
        assert share == sum(p is not None for p in predicted) / len(predicted)


@given(paired(), st.integers(1, 10))
@settings(max_examples=50, deadline=None)
def test_a_none_prediction_is_left_out_never_read_as_zero(pairs, n_missing) -> None:
    predicted, real = pairs
    groups = [f"task-{i % 3}" for i in range(len(real))]
    statuses = ["valid"] * len(real)
    base = metrics.summarize(predicted, statuses, real, statuses, groups, [0.1] * len(real), [1.0] * len(real))
    padded = metrics.summarize(
        predicted + [None] * n_missing,
        statuses + [None] * n_missing,
        real + [0.5] * n_missing,
        statuses + ["valid"] * n_missing,
        groups + ["task-0"] * n_missing,
        [0.1] * len(real) + [None] * n_missing,
        [1.0] * (len(real) + n_missing),
    )
    assert padded["n"] == base["n"] == len(real)
    assert padded["coverage"] == pytest.approx(len(real) / (len(real) + n_missing))
    for key in ("spearman", "pearson", "bias", "residual_sd", "residual_sd_isotonic", "status_accuracy", "cost_s"):
        assert padded[key] == base[key], key


@given(paired())
@settings(max_examples=100, deadline=None)
def test_spearman_is_invariant_under_monotone_transforms_of_the_predictions(pairs) -> None:
    predicted, real = pairs
    rho, _ = metrics.correlations(predicted, real)
    for transform in (lambda x: math.exp(3 * x), lambda x: x**3 + 7, lambda x: 2 * x - 1):
        again, _ = metrics.correlations([transform(p) for p in predicted], real)
        assert (rho is None and again is None) or again == pytest.approx(rho, abs=1e-12)


@given(paired(), st.floats(0.1, 10.0), st.floats(-5.0, 5.0))
@settings(max_examples=100, deadline=None)
def test_pearson_is_invariant_under_positive_affine_maps_of_the_predictions(pairs, scale, shift) -> None:
    predicted, real = pairs
    _, r = metrics.correlations(predicted, real)
    _, again = metrics.correlations([scale * p + shift for p in predicted], real)
    assert (r is None and again is None) or again == pytest.approx(r, abs=1e-9)


@given(st.lists(grid, min_size=1, max_size=30), st.sampled_from(["cube", "exp", "step"]))
@settings(max_examples=100, deadline=None)
def test_isotonic_calibration_of_an_exact_monotone_transform_leaves_no_residual(predicted, kind) -> None:
    transform = {"cube": lambda x: x**3, "exp": lambda x: math.exp(2 * x) - 1, "step": lambda x: float(x > 0.5)}[kind]
    real = [transform(p) for p in predicted]
    assert metrics.isotonic_residual_sd(predicted, real, predicted, real) == pytest.approx(0.0, abs=1e-12)


@given(
    st.lists(st.lists(grid, max_size=6), min_size=2, max_size=6),
    st.floats(0.1, 3.0),
    st.floats(-1.0, 1.0),
)
@settings(max_examples=100, deadline=None)
def test_cross_fitted_calibration_removes_an_affine_distortion(interiors, scale, shift) -> None:
    # Every competition's predictions span [0, 1], so each fold's map covers the other fold's points.
    predicted = [p for inner in interiors for p in [0.0, 1.0, *inner]]
    groups = [f"task-{g}" for g, inner in enumerate(interiors) for _ in range(2 + len(inner))]
    real = [scale * p + shift for p in predicted]
    assert metrics.cross_fitted_isotonic_sd(predicted, real, groups) == pytest.approx(0.0, abs=1e-9)


def test_cross_fitted_calibration_never_fits_the_competitions_it_is_scored_on() -> None:
    # Competition a says predicted == real, b says the opposite: each fold's map is learned on the other one.
    predicted, real, groups = [0.0, 1.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], ["a", "a", "b", "b"]
    # b through a's identity map: residuals -1, +1; a through b's flat map (0.5): residuals +0.5, -0.5.
    expected = math.sqrt((1 + 1 + 0.25 + 0.25) / 4)
    assert metrics.cross_fitted_isotonic_sd(predicted, real, groups) == pytest.approx(expected)


def test_cross_fitted_calibration_is_none_without_two_competitions_to_swap() -> None:
    predicted, real = [0.1, 0.5, 0.9, 0.3], [0.0, 0.4, 1.0, 0.2]
    assert metrics.cross_fitted_isotonic_sd(predicted, real, ["a"] * 4) is None
    assert metrics.cross_fitted_isotonic_sd(predicted, real, ["a", "a", "a", "b"]) is None  # one fold of 1 item
    assert metrics.cross_fitted_isotonic_sd(predicted, real, ["a", "b", "a", "b"]) is not None


@given(st.lists(reals, min_size=3, max_size=30), st.floats(-0.5, 0.5))
def test_a_shifted_predictor_has_that_bias_and_no_residual_spread(real, shift) -> None:
    predicted = [r + shift for r in real]
    assert metrics.mean_bias(predicted, real) == pytest.approx(shift, abs=1e-12)
    assert metrics.residual_sd(predicted, real) == pytest.approx(0.0, abs=1e-12)


def test_figures_are_none_below_three_predictions() -> None:
    summary = metrics.summarize(
        [0.2, None, 0.9],
        ["valid", None, "valid"],
        [0.1, 0.5, 0.8],
        ["valid"] * 3,
        ["a", "b", "c"],
        [1, None, 1],
        [2] * 3,
    )
    assert summary["n"] == 2 and summary["coverage"] == pytest.approx(2 / 3)
    for key in ("spearman", "pearson", "bias", "residual_sd", "residual_sd_isotonic", "status_accuracy"):
        assert summary[key] is None, key
    assert summary["cost_s"] == 1 and summary["relative_cost"] == pytest.approx(0.5)


def test_status_accuracy_reads_does_not_parse_as_a_crash_and_skips_items_without_a_prediction() -> None:
    predicted = ["does_not_parse", "valid", None, "no_submission", "valid"]
    real = ["crashes", "valid", "valid", "valid", "valid"]
    assert metrics.status_accuracy(predicted, real) == pytest.approx(3 / 4)
    with pytest.raises(ValueError, match="real statuses must be one of"):
        metrics.status_accuracy(["valid"] * 3, ["valid", "ok", "valid"])


def test_relative_cost_compares_with_the_real_runs_of_the_same_solutions_only() -> None:
    cost, ratio = metrics.relative_cost([0.5, None, 1.5], [2.0, 100.0, 2.0])
    assert cost == pytest.approx(1.0) and ratio == pytest.approx(0.5)
    assert metrics.relative_cost([None, None], [1.0, 1.0]) == (None, None)


def test_mismatched_lengths_and_non_finite_values_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="2 predictions for 3 real outcomes"):
        metrics.correlations([0.1, 0.2], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="finite"):
        metrics.mean_bias([0.1, float("nan"), 0.3], [0.1, 0.2, 0.3])


def test_failure_reasons_are_counted_by_kind_not_by_reply_text() -> None:
    reasons = [
        "no prediction in the reply (no JSON object); reply starts 'abc' [reply of 8 tokens]",
        "no prediction in the reply (no JSON object); reply starts 'xyz' [reply of 8 tokens]",
        "prompt for t failed: too long",
    ]
    assert world_models.reason_counts(reasons) == {
        "no prediction in the reply (no JSON object)": 2,
        "prompt for t failed: too long": 1,
    }


def test_unknown_ids_and_variants_are_rejected_with_the_known_ones_listed(capsys) -> None:
    with pytest.raises(SystemExit):
        world_models.parse_args(["--ids", "no-such-task"])
    assert "telco-customer-churn" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        world_models.parse_args(["--variants", "perfect"])
    assert "shuffled_half" in capsys.readouterr().err


@pytest.mark.slow
def test_a_tiny_benchmark_runs_every_world_model_for_real_and_reuses_its_corpus(tmp_path) -> None:
    out = tmp_path / "world_models.json"
    common = ["--ids", "telco-customer-churn", "--variants", "prior", "crash", "--out", str(out)]
    report = world_models.main([*common, "--llm-reply-tokens", "8"])
    assert json.loads(out.read_text()) == report
    assert (tmp_path / world_models.CORPUS_NAME).is_file()
    assert report["corpus"]["runs"] == 2 and report["corpus"]["ran"] == 2
    rows = {row["variant"]: row for row in report["items"]}
    assert rows["crash"]["real_status"] == "crashes" and rows["crash"]["real_position"] == 0.0
    assert rows["prior"]["real_status"] == "valid" and rows["prior"]["real_position"] > 0
    # The proxy really runs the code: it sees the crash for what it is.
    assert rows["crash"]["predicted"]["proxy"]["status"] == "crashes"
    assert rows["crash"]["predicted"]["proxy"]["position"] == 0.0
    assert report["world_models"]["proxy"]["coverage"] == 1.0
    # A held-out-only corpus gives the surrogate nothing to learn from: skipped with a reason, not a number.
    assert "valid train-split run" in report["world_models"]["surrogate"]["skipped"]
    llm = report["world_models"]["llm_tiny"]
    assert llm["n_items"] == 2 and llm["n"] + sum(llm["no_prediction_reasons"].values()) == 2
    assert llm["setup_s"] > 0 and llm["wall_s_per_item"] > 0
    assert all(np.isfinite(row["real_wall_s"]) for row in report["items"])

    again = world_models.main([*common, "--skip-llm"])
    assert again["corpus"]["reused"] == 2 and again["corpus"]["ran"] == 0
    assert "llm_tiny" not in again["world_models"]
    assert [r["real_position"] for r in again["items"]] == [r["real_position"] for r in report["items"]]


def test_a_changed_board_or_answer_reruns_that_competitions_corpus_runs(tmp_path) -> None:
    # Task features (data sizes) do not see a board rewritten or labels flipped in place: the runs' positions would
    # be stale, so the corpus records each competition's ground truth and reruns its solutions when it changes.
    from wmrl_tasks.mledojo.pool import build_pool
    from wmrl_tasks.mledojo.readers import read_competition

    from wmrl_envs.sandbox import Limits, make_executor

    folder = tmp_path / "telco-customer-churn"
    shutil.copytree(build_pool(ids=["telco-customer-churn"]) / "telco-customer-churn", folder)
    corpus, executor, limits = tmp_path / world_models.CORPUS_NAME, make_executor("local"), Limits(wall_time_s=60)

    def build() -> dict:
        runs, stats = world_models.build_corpus(
            [read_competition(folder)], ["prior"], corpus, False, executor, limits, 1
        )
        return {"stats": stats, "position": runs[0].entry.position}

    first = build()
    assert first["stats"]["ran"] == 1 and world_models.truths_path(corpus).is_file()
    assert build()["stats"]["reused"] == 1
    competition = read_competition(folder)
    board = competition.private_leaderboard_path
    header, *rows = board.read_text().splitlines()
    board.write_text("\n".join([header, *("0,1.0" for _ in range(30)), *rows]) + "\n")
    rerun = build()
    assert rerun["stats"]["ran"] == 1 and rerun["position"] < first["position"]  # 30 perfect teams now rank above


truth_maps = st.dictionaries(st.sampled_from("abcdef"), st.sampled_from(["t1", "t2", "t3"]))


@given(truth_maps, truth_maps, st.sets(st.sampled_from("abcdef")))
def test_a_competition_whose_rerun_failed_keeps_the_truth_its_logged_runs_were_graded_on(
    recorded, current, unscored
) -> None:
    # A rerun that failed in the sandbox leaves the old entry in the log: recording the new truth would make the next
    # run reuse that stale entry as if it were graded on the new one.
    settled = world_models.settled_truths(recorded, current, unscored)
    for task in set(recorded) | set(current):
        expected = recorded.get(task) if task in unscored else current.get(task, recorded.get(task))
        assert settled.get(task) == expected
