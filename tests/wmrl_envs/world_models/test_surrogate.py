"""The learned surrogate: fit on real runs of training tasks, predict without running, survive a file round trip."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import joblib
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wmrl_envs.errors import WmrlError
from wmrl_envs.execution_log import ExecutionLog, LogEntry
from wmrl_envs.world_models import (
    FEATURE_NAMES,
    HeldOutEntriesError,
    LearnedSurrogate,
    PredictedStatus,
    Predictor,
    SurrogateFileError,
    code_features,
    evaluate_surrogate,
)

TRAIN_IDS = ("credit-scoring-f1", "hpc-job-runtime")


@pytest.fixture(scope="module")
def real_log(pool_root: Path, tmp_path_factory: pytest.TempPathFactory) -> list[LogEntry]:
    """Ten real executions: the baseline and four degraded variants on two small training tasks."""
    from wmrl_tasks.mledojo.pool.variants import solution_variants
    from wmrl_tasks.mledojo.readers import read_competition

    from wmrl_envs.rewards.base import Rollout
    from wmrl_envs.rewards.real import RealExecution
    from wmrl_envs.sandbox.base import Limits

    log = ExecutionLog(tmp_path_factory.mktemp("surrogate") / "runs.jsonl")
    rollouts = [
        Rollout(competition, code)
        for cid in TRAIN_IDS
        for competition in [read_competition(pool_root / cid)]
        for code in solution_variants(competition).values()
    ]
    RealExecution(limits=Limits(wall_time_s=120), workers=2, log=log).score(rollouts)
    entries = log.read()
    assert len(entries) == 10
    return entries


@pytest.fixture(scope="module")
def fitted(real_log: list[LogEntry]) -> LearnedSurrogate:
    return LearnedSurrogate().fit(real_log)


def _entry(entries: list[LogEntry], task_id: str, marker: str) -> LogEntry:
    return next(e for e in entries if e.task_id == task_id and marker in e.code)


@pytest.mark.slow
def test_the_surrogate_is_a_predictor(fitted: LearnedSurrogate) -> None:
    assert isinstance(fitted, Predictor)


@pytest.mark.slow
def test_predictions_follow_the_real_quality_of_solutions_it_was_fit_on(
    fitted: LearnedSurrogate, real_log: list[LogEntry], pool_root: Path
) -> None:
    from wmrl_tasks.mledojo.readers import read_competition

    report = evaluate_surrogate(fitted, real_log)
    assert report["n_predicted"] == 10 and report["status_accuracy"] == 1.0
    assert report["spearman"] is not None and report["spearman"] > 0.8

    competition = read_competition(pool_root / "credit-scoring-f1")
    crash = _entry(real_log, "credit-scoring-f1", "deliberate crash")
    prior = _entry(real_log, "credit-scoring-f1", "value_counts")
    assert fitted.predict(competition, crash.code).status is PredictedStatus.CRASHES
    assert fitted.predict(competition, crash.code).position is None
    best = max((e for e in real_log if e.task_id == competition.id), key=lambda e: e.position)
    predicted_best = fitted.predict(competition, best.code)
    predicted_prior = fitted.predict(competition, prior.code)
    assert predicted_best.status is PredictedStatus.VALID and predicted_prior.status is PredictedStatus.VALID
    assert predicted_best.position > predicted_prior.position
    assert 0.0 <= predicted_best.position <= 1.0 and predicted_best.uncertainty is not None
    assert json.loads(predicted_best.raw)["task_seen_in_training"] is True


@pytest.mark.slow
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.permutations(range(10)))
def test_the_same_runs_logged_in_another_order_give_the_same_model(
    fitted: LearnedSurrogate, real_log: list[LogEntry], order: list[int]
) -> None:
    # A log's order is the order parallel runs happened to finish in; it must not change the world model.
    shuffled = LearnedSurrogate().fit([real_log[i] for i in order])
    for entry in real_log:
        a, b = fitted.predict_entry(entry), shuffled.predict_entry(entry)
        assert (a.status, a.position, a.uncertainty) == (b.status, b.position, b.uncertainty)


@pytest.mark.slow
def test_save_and_load_give_identical_predictions(
    fitted: LearnedSurrogate, real_log: list[LogEntry], tmp_path: Path
) -> None:
    path = fitted.save(tmp_path / "model.joblib")
    loaded = LearnedSurrogate.load(path)
    assert loaded.tasks_seen == fitted.tasks_seen
    for entry in real_log:
        before, after = fitted.predict_entry(entry), loaded.predict_entry(entry)
        assert (before.status, before.position, before.uncertainty) == (after.status, after.position, after.uncertainty)


@pytest.mark.slow
def test_fit_refuses_held_out_entries(real_log: list[LogEntry]) -> None:
    leaked = real_log + [replace(real_log[0], task_id="telco-customer-churn", split="held-out")]
    with pytest.raises(HeldOutEntriesError, match="telco-customer-churn"):
        LearnedSurrogate().fit(leaked)


@pytest.mark.slow
def test_an_unseen_task_is_predicted_from_task_and_code_features_and_says_so(
    fitted: LearnedSurrogate, real_log: list[LogEntry], pool_root: Path
) -> None:
    from wmrl_tasks.mledojo.pool.baselines import baseline_code
    from wmrl_tasks.mledojo.readers import read_competition

    held_out = read_competition(pool_root / "telco-customer-churn")
    assert held_out.id not in fitted.tasks_seen
    prediction = fitted.predict(held_out, baseline_code(held_out.id))
    assert prediction is not None and prediction.status is PredictedStatus.VALID
    assert 0.0 <= prediction.position <= 1.0
    detail = json.loads(prediction.raw)
    assert detail["task_seen_in_training"] is False and "never seen" in detail["fallback"]
    # A metric the log never saw is no error either: its kind and direction still describe it.
    assert fitted.predict_task("new-task", {"metric": "brand_new_metric", "category": "other"}, real_log[0].code)


@pytest.mark.slow
def test_a_program_that_does_not_parse_is_predicted_not_to_parse(
    fitted: LearnedSurrogate, real_log: list[LogEntry]
) -> None:
    prediction = fitted.predict_task(real_log[0].task_id, real_log[0].task, "def broken(:\n    pass\n")
    assert prediction.status is PredictedStatus.DOES_NOT_PARSE and prediction.position is None


def test_a_corrupt_model_file_raises_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "model.joblib"
    path.write_bytes(b"\x80\x04 certainly not a pickle")
    with pytest.raises(SurrogateFileError, match="model.joblib"):
        LearnedSurrogate.load(path)
    with pytest.raises(SurrogateFileError, match="does not exist"):
        LearnedSurrogate.load(tmp_path / "missing.joblib")


def test_a_model_file_of_another_schema_or_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "model.joblib"
    joblib.dump({"header": {"format": "wmrl-learned-surrogate", "schema": 999}, "surrogate": None}, path)
    with pytest.raises(SurrogateFileError, match="schema 999"):
        LearnedSurrogate.load(path)
    joblib.dump({"weights": [1, 2, 3]}, path)
    with pytest.raises(SurrogateFileError, match="not a wmrl learned surrogate"):
        LearnedSurrogate.load(path)


def test_an_unfitted_surrogate_neither_predicts_nor_saves(tmp_path: Path) -> None:
    surrogate = LearnedSurrogate()
    with pytest.raises(WmrlError, match="not fitted"):
        surrogate.predict_task("t", {}, "print(1)")
    with pytest.raises(WmrlError, match="unfitted"):
        surrogate.save(tmp_path / "m.joblib")


def test_code_features_have_the_same_names_for_any_program() -> None:
    good = code_features(
        "import os\nfrom sklearn.ensemble import RandomForestClassifier\n"
        "m = RandomForestClassifier(n_estimators=300, max_depth=8, random_state=0)\n"
        "m.fit(X, y)\np = m.predict(T)\nout.to_csv(os.environ['SUBMISSION_PATH'])\n"
    )
    broken = code_features("def (:")
    assert list(good) == list(broken) == list(FEATURE_NAMES)
    assert good["parses"] == 1 and broken["parses"] == 0
    assert good["imports_sklearn"] == 1 and good["family_forest"] >= 1
    assert good["calls_fit"] == 1 and good["calls_predict"] == 1 and good["mentions_submission_path"] == 1
    assert good["log_model_size"] > 5 and good["random_state"] == 1
    assert code_features("raise RuntimeError('x')\nimport pandas\n")["top_level_raise"] == 1


@pytest.mark.parametrize("hostile", ["word " * 2000, "(" * 5000 + ")" * 5000, "[" * 300 + "]" * 300])
def test_hostile_code_reads_as_unparseable_not_as_a_crash(hostile: str) -> None:
    features = code_features(hostile)
    assert features["parses"] == 0.0
    assert code_features("import pandas as pd\nprint(pd.__version__)\n")["parses"] == 1.0
