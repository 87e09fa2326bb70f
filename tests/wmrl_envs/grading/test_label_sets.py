"""Grading accepts what the competition accepts, from folders in both layouts, and feedback hides the answers.

Folders are generated in MLE-Dojo's (``<comp>/data/{public,private}``) and MLE-bench's
(``<id>/prepared/{public,private}`` + config.yaml + leaderboard.csv) layouts, with the real
metadata and leaderboards from the reference folder, and read by the task family's reader.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, roc_auc_score
from wmrl_tasks.mledojo.readers import read_competition

from wmrl_envs.competition import Competition
from wmrl_envs.grading import Grader
from wmrl_envs.grading.label_sets import task_labels

LAYOUTS = ("mledojo", "mlebench")


@dataclass(frozen=True)
class Folder:
    """A generated competition folder and the frames written into it."""

    competition: Competition
    answers: pd.DataFrame


def build(
    root: Path,
    layout: str,
    comp_id: str,
    reference_dir: Path,
    train: pd.DataFrame,
    answers: pd.DataFrame,
    sample: pd.DataFrame,
    task_yaml: dict | None = None,
) -> Folder:
    """Write one competition in `layout` under `root` and read it as the environment would."""
    dojo_board = reference_dir / comp_id / "mledojo" / "private_leaderboard.csv"
    if layout == "mledojo":
        top = root / comp_id
        public, private = top / "data" / "public", top / "data" / "private"
        answers_path = private / "test_answer.csv"
    else:
        top = root / comp_id
        public, private = top / "prepared" / "public", top / "prepared" / "private"
        answers_path = private / "test.csv"
    public.mkdir(parents=True)
    private.mkdir(parents=True)
    train.to_csv(public / "train.csv", index=False)
    answers.drop(columns=answers.columns[1:]).to_csv(public / "test.csv", index=False)
    sample.to_csv(public / "sample_submission.csv", index=False)
    answers.to_csv(answers_path, index=False)
    if layout == "mledojo":
        (public / "description.txt").write_text(f"{comp_id}: a generated stand-in.\n")
        if dojo_board.is_file():
            for board in ("public_leaderboard.csv", "private_leaderboard.csv"):
                (private / board).write_bytes(dojo_board.read_bytes())
    else:
        (public / "description.md").write_text(f"# {comp_id}\nA generated stand-in.\n")
        config = {
            "id": comp_id,
            "name": comp_id,
            "dataset": {
                "answers": f"{comp_id}/prepared/private/test.csv",
                "sample_submission": f"{comp_id}/prepared/public/sample_submission.csv",
            },
        }
        (top / "config.yaml").write_text(yaml.safe_dump(config))
        if dojo_board.is_file():
            scores = pd.read_csv(dojo_board)["score"]
            pd.DataFrame({"teamId": range(len(scores)), "score": scores}).to_csv(top / "leaderboard.csv", index=False)
    if task_yaml is not None:
        (top / "task.yaml").write_text(yaml.safe_dump(task_yaml))
    return Folder(read_competition(top), answers)


def submit(folder: Folder, tmp_path: Path, frame: pd.DataFrame, grader: Grader | None = None):
    path = tmp_path / "out" / "submission.csv"
    path.parent.mkdir(exist_ok=True)
    frame.to_csv(path, index=False)
    return (grader or Grader()).grade(folder.competition, path)


# --- a multiclass task whose test answers lack classes ---------------------------------------------

COVER = "tabular-playground-series-dec-2021"
N = 40


@pytest.fixture(params=LAYOUTS)
def cover(request, tmp_path, reference_dir) -> Folder:
    """7 classes in the training data; the test answers hold only 1, 2, 3 and 7."""
    rng = np.random.default_rng(0)
    train = pd.DataFrame({"Id": range(1000, 1070), "Elevation": rng.random(70), "Cover_Type": list(range(1, 8)) * 10})
    answers = pd.DataFrame({"Id": range(N), "Cover_Type": rng.choice([1, 2, 3, 7], N)})
    sample = pd.DataFrame({"Id": range(N), "Cover_Type": [2] * N})
    return build(tmp_path / "data", request.param, COVER, reference_dir, train, answers, sample)


def test_the_label_set_comes_from_the_training_data_not_the_answers(cover):
    allowed = task_labels(cover.competition, "Cover_Type")
    assert allowed is not None and allowed.labels == {str(c) for c in range(1, 8)}


def test_a_class_missing_from_the_test_answers_is_a_valid_prediction(cover, tmp_path):
    predictions = cover.answers.assign(Cover_Type=[5] + cover.answers["Cover_Type"].tolist()[1:])
    grade = submit(cover, tmp_path, predictions)
    assert grade.valid, grade.reason
    expected = accuracy_score(cover.answers["Cover_Type"], predictions["Cover_Type"])
    assert grade.score == pytest.approx(expected)
    assert grade.position is not None


def test_a_label_the_task_never_names_is_refused_naming_only_public_labels(cover, tmp_path):
    grade = submit(cover, tmp_path, cover.answers.assign(Cover_Type=[9] + [1] * (N - 1)))
    assert not grade.valid
    assert "outside the 7 labels of train.csv and the sample submission {1, 2, 3, 4, 5, 6, 7}" in grade.reason
    assert "'9' (id 0)" in grade.reason


# --- labels only the hidden answers hold are never named --------------------------------------------

TREES = ["Aspen", "Birch", "Cedar", "Douglas"]
HIDDEN = "Krummholz"


@pytest.fixture(params=LAYOUTS)
def trees(request, tmp_path, reference_dir) -> Folder:
    """Training labels Aspen..Douglas; the answers lack Douglas and hold Krummholz, which no public file names."""
    train = pd.DataFrame({"tree_id": range(100, 108), "species": TREES * 2})
    answers = pd.DataFrame({"tree_id": range(12), "species": ["Aspen", "Birch", "Cedar", HIDDEN] * 3})
    sample = pd.DataFrame({"tree_id": range(12), "species": ["Aspen"] * 12})
    spec = {"metric": "accuracy", "higher_is_better": True, "category": "multiclass"}
    return build(tmp_path / "data", request.param, "toy-trees", reference_dir, train, answers, sample, spec)


_labels = st.sampled_from([*TREES, "Elm", "aspen", "", " Birch ", "0", "NaN", "Krumm"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(labels=st.lists(_labels, min_size=0, max_size=14), ids=st.lists(st.integers(-2, 14), min_size=0, max_size=14))
def test_no_feedback_names_a_label_only_the_answers_hold(trees, tmp_path, labels, ids):
    n = min(len(ids), len(labels)) if ids else len(labels)
    frame = pd.DataFrame({"tree_id": ids[:n] or list(range(n)), "species": labels[:n]})
    grade = submit(trees, tmp_path, frame)
    assert HIDDEN not in grade.reason
    assert all(HIDDEN not in warning for warning in grade.warnings)
    assert HIDDEN not in str(grade.to_dict())


def test_the_answers_hidden_label_is_warned_as_a_count(trees, tmp_path):
    grade = submit(trees, tmp_path, trees.answers.assign(species="Douglas"))
    assert grade.valid and grade.score == 0.0
    assert any("1 label(s) in the answers" in warning for warning in grade.warnings)


def test_labels_declared_in_task_yaml_are_the_allowed_set(tmp_path, reference_dir):
    train = pd.DataFrame({"tree_id": range(4), "species": TREES})
    answers = pd.DataFrame({"tree_id": range(4), "species": TREES})
    spec = {"metric": "accuracy", "higher_is_better": True, "category": "multiclass",
            "metric_kwargs": {"labels": [*TREES, "Elm"]}}  # fmt: skip
    folder = build(tmp_path / "data", "mlebench", "toy-declared", reference_dir, train, answers, answers, spec)
    assert submit(folder, tmp_path, answers.assign(species="Elm")).valid
    refused = submit(folder, tmp_path, answers.assign(species="Fir"))
    assert not refused.valid and "the labels the task declares" in refused.reason


def test_without_training_labels_any_label_is_scored(tmp_path, reference_dir):
    train = pd.DataFrame({"tree_id": range(4), "height": [1.0, 2.0, 3.0, 4.0]})
    answers = pd.DataFrame({"tree_id": range(4), "species": TREES})
    spec = {"metric": "accuracy", "higher_is_better": True, "category": "multiclass"}
    folder = build(tmp_path / "data", "mledojo", "toy-unlabelled", reference_dir, train, answers, answers, spec)
    grade = submit(folder, tmp_path, answers.assign(species=["Aspen", "Fir", "Fir", "Fir"]))
    assert grade.valid and grade.score == 0.25


# --- a rank metric scored on any finite reals -----------------------------------------------------

MAY = "tabular-playground-series-may-2022"


@pytest.fixture(params=LAYOUTS)
def may(request, tmp_path, reference_dir) -> Folder:
    rng = np.random.default_rng(1)
    train = pd.DataFrame({"id": range(100, 150), "f_00": rng.random(50), "target": [0, 1] * 25})
    answers = pd.DataFrame({"id": range(N), "target": rng.integers(0, 2, N)})
    sample = pd.DataFrame({"id": range(N), "target": [0.5] * N})
    return build(tmp_path / "data", request.param, MAY, reference_dir, train, answers, sample)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scale=st.floats(1.0, 1e6), shift=st.floats(-1e6, 1e6), seed=st.integers(0, 2**32 - 1))
def test_roc_auc_scores_logits_and_margins_outside_0_1(may, tmp_path, scale, shift, seed):
    noisy = may.answers["target"] + np.random.default_rng(seed).normal(0, 0.8, N)
    scores = noisy * scale + shift
    grade = submit(may, tmp_path, may.answers.assign(target=scores))
    assert grade.valid, grade.reason
    assert grade.score == pytest.approx(roc_auc_score(may.answers["target"], scores))
    probabilities = submit(may, tmp_path, may.answers.assign(target=1 / (1 + np.exp(-noisy))))
    assert grade.score == pytest.approx(probabilities.score)


def test_normalized_gini_scores_any_finite_real(tmp_path, reference_dir):
    answers = pd.DataFrame({"id": range(6), "target": [0, 1, 0, 1, 1, 0]})
    train = pd.DataFrame({"id": range(10, 16), "target": [0, 1] * 3})
    folder = build(tmp_path / "data", "mledojo", "porto-seguro-safe-driver-prediction", reference_dir, train,
                   answers, answers)  # fmt: skip
    grade = submit(folder, tmp_path, answers.assign(target=[-30.0, 12.5, -4.0, 40.0, 3.0, -1e6]))
    assert grade.valid and grade.score == pytest.approx(1.0)


def test_unreadable_training_data_enforces_no_set_and_says_so(tmp_path, reference_dir, caplog):
    train = pd.DataFrame({"tree_id": range(4), "species": TREES})
    answers = pd.DataFrame({"tree_id": range(4), "species": TREES})
    spec = {"metric": "accuracy", "higher_is_better": True, "category": "multiclass"}
    folder = build(tmp_path / "data", "mledojo", "toy-broken", reference_dir, train, answers, answers, spec)
    (folder.competition.public_dir / "train.csv").write_bytes(b"tree_id,species\n1,Aspen\n2,\xff\xfe\n")
    with caplog.at_level(logging.WARNING):
        grade = submit(folder, tmp_path, answers.assign(species=["Aspen", "Fir", "Fir", "Fir"]))
    assert grade.valid and grade.score == 0.25
    assert "train.csv cannot be read for its labels" in caplog.text
