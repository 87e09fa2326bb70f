"""The grader end to end: a file in, an auditable Grade out; bad files never raise, broken tasks do."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wmrl_envs.grading.grader import Grade, Grader, PositionScore
from wmrl_envs.grading.metrics import METRICS

IDS = list(range(1, 21))
TARGET = [0, 1] * 10


def write(tmp_path: Path, frame: pd.DataFrame, name: str = "submission.csv") -> Path:
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


@pytest.fixture
def credit(make_competition, reference_dir):
    """A toy AUC task placed on GiveMeSomeCredit's real public and private boards."""
    boards = reference_dir / "GiveMeSomeCredit" / "mledojo"
    answers = pd.DataFrame({"Id": IDS, "Probability": TARGET})
    return make_competition(
        answers,
        "roc_auc",
        True,
        id_column="Id",
        public_board=boards / "public_leaderboard.csv",
        private_board=boards / "private_leaderboard.csv",
    )


def test_perfect_submission_places_first_on_both_real_boards_with_gold(credit, tmp_path):
    submission = pd.DataFrame({"Id": IDS, "Probability": np.array(TARGET) * 0.8 + 0.1})
    grade = Grader().grade(credit, write(tmp_path, submission))
    assert grade.valid and grade.reason == "" and grade.warnings == ()
    assert grade.score == grade.public_score == grade.private_score == 1.0
    assert grade.position == PositionScore(public=1.0, private=1.0, average=1.0)
    assert grade.medal is not None and grade.medal.medal == "gold"


def test_coin_flip_submission_places_near_the_bottom(credit, tmp_path):
    submission = pd.DataFrame({"Id": IDS, "Probability": 0.5})
    grade = Grader().grade(credit, write(tmp_path, submission))
    assert grade.score == 0.5
    assert 0.0 < grade.position.average < 0.05 and grade.medal.medal is None and not grade.medal.above_median


def test_invalid_submission_gives_an_invalid_grade_with_the_reason(credit, tmp_path):
    submission = pd.DataFrame({"Id": IDS[:-3], "Probability": 0.5})
    grade = Grader().grade(credit, write(tmp_path, submission))
    assert grade == Grade(valid=False, reason="17 rows, expected 20 (ids missing: 18, 19, 20)")
    assert grade.position is None and grade.medal is None and grade.score is None


def test_no_submission_file_is_invalid_not_an_error(credit, tmp_path):
    assert Grader().grade(credit, None).reason == "no submission file was written"
    assert "no submission file at" in Grader().grade(credit, tmp_path / "missing.csv").reason


def test_missing_answers_file_is_a_broken_task_that_names_the_file(credit, tmp_path):
    credit.answers_path.unlink()
    with pytest.raises(FileNotFoundError, match="test_answer.csv"):
        Grader().grade(credit, write(tmp_path, pd.DataFrame({"Id": IDS, "Probability": 0.5})))


def test_usage_column_scores_each_board_on_its_own_rows(make_competition, tmp_path):
    usage = ["Public"] * 10 + ["Private"] * 10
    answers = pd.DataFrame({"id": IDS, "y": np.arange(20.0), "Usage": usage})
    competition = make_competition(answers, "rmse", False, public_board=[0.0, 1.0, 2.0, 3.0], private_board=[0.5, 1.5])
    predictions = np.arange(20.0) + np.r_[np.zeros(10), np.full(10, 2.0)]  # public rows exact, private rows off by 2
    grade = Grader().grade(competition, write(tmp_path, pd.DataFrame({"id": IDS, "y": predictions})))
    assert grade.public_score == 0.0 and grade.private_score == 2.0
    assert grade.score == pytest.approx(np.sqrt(2.0))
    assert grade.position == PositionScore(public=1.0, private=0.0, average=0.5)
    assert grade.medal.medal is None  # medals come from the private board


def test_without_usage_the_same_score_goes_on_both_boards(make_competition, tmp_path):
    answers = pd.DataFrame({"id": IDS, "y": np.arange(20.0)})
    competition = make_competition(
        answers, "mae", False, public_board=[0.5, 1.0, 2.0], private_board=[0.5, 1.5, 3.0, 4.0]
    )
    grade = Grader().grade(competition, write(tmp_path, answers.assign(y=answers["y"] + 1.0)))
    assert grade.score == grade.public_score == grade.private_score == 1.0
    assert grade.position == PositionScore(public=2 / 3, private=0.75, average=(2 / 3 + 0.75) / 2)


def test_missing_leaderboards_give_no_position_and_say_so(make_competition, tmp_path):
    answers = pd.DataFrame({"id": IDS, "y": np.arange(20.0)})
    competition = make_competition(answers, "rmse", False, private_board=tmp_path / "gone.csv")
    grade = Grader().grade(competition, write(tmp_path, answers))
    assert grade.valid and grade.score == 0.0
    assert grade.position is None and grade.medal is None
    assert any("no public leaderboard" in w and "has none" in w for w in grade.warnings)
    assert any("no private leaderboard" in w and "gone.csv" in w for w in grade.warnings)


def test_one_missing_board_still_places_on_the_other(make_competition, tmp_path):
    answers = pd.DataFrame({"id": IDS, "y": np.arange(20.0)})
    competition = make_competition(answers, "rmse", False, public_board=[0.0, 1.0])
    grade = Grader().grade(competition, write(tmp_path, answers))
    assert grade.position == PositionScore(public=1.0, private=None, average=1.0)
    assert grade.medal is None and len(grade.warnings) == 1


def test_board_contradicting_the_direction_is_warned_and_logged_once(make_competition, tmp_path, caplog):
    answers = pd.DataFrame({"id": IDS, "y": np.arange(20.0)})
    ascending = [0.1, 0.5, 0.9]  # sorted as if lower were better, for a metric declared higher-is-better
    competition = make_competition(answers, "r2", True, public_board=ascending, private_board=ascending)
    grader, path = Grader(), write(tmp_path, answers)
    with caplog.at_level(logging.WARNING, logger="wmrl_envs.grading.grader"):
        first, second = grader.grade(competition, path), grader.grade(competition, path)
    assert first.warnings == second.warnings and len(first.warnings) == 2
    assert all("contradicts the declared direction" in w for w in first.warnings)
    assert len(caplog.records) == 2  # one per board file, not one per grade


def test_direction_that_contradicts_the_metric_is_warned(make_competition, tmp_path):
    answers = pd.DataFrame({"id": IDS, "y": np.arange(20.0)})
    competition = make_competition(answers, "rmse", True, public_board=[3.0, 2.0], private_board=[3.0, 2.0])
    grade = Grader().grade(competition, write(tmp_path, answers))
    assert any("declares maximize but metric rmse is minimized" in w for w in grade.warnings)


def test_validation_only_kwargs_are_not_passed_to_the_metric(make_competition, tmp_path):
    answers = pd.DataFrame({"Id": IDS, "Response": [1, 2, 3, 4] * 5})
    competition = make_competition(
        answers, "quadratic_weighted_kappa", True, id_column="Id", metric_kwargs={"labels": list(range(1, 9))},
        public_board=[0.9, 0.5], private_board=[0.9, 0.5],
    )  # fmt: skip
    grade = Grader().grade(competition, write(tmp_path, answers))
    assert grade.valid and grade.score == 1.0


def test_grade_serialises_to_json(credit, tmp_path):
    grade = Grader().grade(credit, write(tmp_path, pd.DataFrame({"Id": IDS, "Probability": np.linspace(0, 1, 20)})))
    data = json.loads(json.dumps(grade.to_dict()))
    assert data["valid"] is True and data["position"]["average"] == grade.position.average
    assert data["medal"]["medal"] == grade.medal.medal and data["warnings"] == []
    invalid = json.loads(json.dumps(Grader().grade(credit, None).to_dict()))
    assert invalid["position"] is None and invalid["score"] is None


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_row_shuffles_do_not_change_the_grade(credit, tmp_path, data):
    scores = np.round(np.random.default_rng(0).random(20), 3)
    order = data.draw(st.permutations(range(20)))
    submission = pd.DataFrame({"Id": IDS, "Probability": scores})
    grader = Grader()
    reference = grader.grade(credit, write(tmp_path, submission, "a.csv"))
    shuffled = grader.grade(credit, write(tmp_path, submission.iloc[order], "b.csv"))
    assert shuffled == reference


# --- a valid grade's score is always finite ------------------------------------------------------

_EXTREMES = [1e308, -1e308, 1.7976931348623157e308, 1e-308, 0.0, 1e154, -1e200, 0.5]
_EXTREME_OR_ANY = st.sampled_from(_EXTREMES) | st.floats(allow_nan=False, allow_infinity=False)


def _answers_and_submission(metric: str, values: list[float]) -> tuple[pd.DataFrame, pd.DataFrame]:
    n = len(values)
    ids = list(range(n))
    if metric in ("mean_column_roc_auc", "multiclass_log_loss", "mean_column_rmsle"):
        truth = {"a": [i % 2 for i in ids], "b": [(i + 1) % 2 for i in ids]}
        return pd.DataFrame({"id": ids, **truth}), pd.DataFrame({"id": ids, "a": values, "b": values[::-1]})
    if metric == "map_at_k":
        return pd.DataFrame({"id": ids, "y": ["A B"] * n}), pd.DataFrame({"id": ids, "y": [f"{v!r} A" for v in values]})
    binary = metric in ("roc_auc", "log_loss", "normalized_gini", "f1")
    truth = [i % 2 for i in ids] if binary else [i % 3 + 1 for i in ids]
    return pd.DataFrame({"id": ids, "y": truth}), pd.DataFrame({"id": ids, "y": values})


@pytest.mark.parametrize("metric", sorted(METRICS))
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(_EXTREME_OR_ANY, min_size=4, max_size=8))
def test_a_valid_grade_has_a_finite_score_whatever_the_predictions(make_competition, tmp_path, metric, values):
    answers, submission = _answers_and_submission(metric, values)
    competition = make_competition(answers, metric, METRICS[metric].higher_is_better, name=f"finite-{metric}")
    grade = Grader().grade(competition, write(tmp_path, submission))
    if grade.valid:
        assert all(np.isfinite(s) for s in (grade.score, grade.public_score, grade.private_score))
        assert grade.to_dict()["score"] is not None
    else:
        assert grade.reason


@pytest.mark.parametrize("metric", ["rmse", "mae", "r2", "smape"])
def test_predictions_of_1e308_are_invalid_with_a_reason_not_a_null_score(make_competition, tmp_path, metric):
    answers = pd.DataFrame({"id": range(4), "y": [1.0, 2.0, 3.0, 4.0]})
    competition = make_competition(answers, metric, METRICS[metric].higher_is_better)
    grade = Grader().grade(competition, write(tmp_path, answers.assign(y=[1e308, -1e308, 1e308, 2.0])))
    assert not grade.valid
    assert "not a finite number" in grade.reason and "1e+308" in grade.reason


# --- the submission is read where the run left it, through no link -------------------------------


def test_an_output_folder_swapped_for_a_link_to_another_run_is_not_graded(credit, tmp_path):
    victim, attacker = tmp_path / "run-victim", tmp_path / "run-attacker"
    victim.mkdir()
    attacker.mkdir()
    perfect = pd.DataFrame({"Id": IDS, "Probability": TARGET})
    write(victim, perfect)
    assert Grader().grade(credit, victim / "submission.csv").valid
    attacker.rename(tmp_path / "elsewhere")
    attacker.symlink_to(victim)
    grade = Grader().grade(credit, attacker / "submission.csv")
    assert not grade.valid
    assert "run-attacker is a symbolic link" in grade.reason


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda p, answers: p.symlink_to(answers), "a symbolic link"),
        (lambda p, answers: os.mkfifo(p), "a named pipe (FIFO)"),
        (lambda p, answers: p.mkdir(), "a directory"),
    ],
)
def test_something_other_than_a_file_at_the_submission_path_is_named(credit, tmp_path, make, kind):
    path = tmp_path / "submission.csv"
    make(path, credit.answers_path)
    grade = Grader().grade(credit, path)
    assert not grade.valid
    assert f"is {kind}" in grade.reason and "no submission file was written" not in grade.reason
