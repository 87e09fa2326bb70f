"""The cheap-execution proxy: a seeded split of the public data, real runs on it, statuses and rankings."""

from __future__ import annotations

import dataclasses
import filecmp
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import spearmanr
from wmrl_tasks.mledojo.pool import POOL_IDS
from wmrl_tasks.mledojo.pool.baselines import baseline_code
from wmrl_tasks.mledojo.readers import read_competition

from wmrl_envs.grading import get_metric
from wmrl_envs.outcome import execute_and_grade
from wmrl_envs.rewards import Rollout, WorldModel
from wmrl_envs.sandbox import Limits, make_executor
from wmrl_envs.sandbox.base import ExecutionResult, Status
from wmrl_envs.world_models import (
    CheapExecutionProxy,
    PredictedStatus,
    Predictor,
    PredictorError,
    ProxySplit,
    build_proxy_competition,
    proxy_record,
)

RANKED = ("telco-customer-churn", "hpc-job-runtime")
"""Competitions whose baselines run in a few seconds, with a binary and a multiclass metric."""
LIMITS = Limits(wall_time_s=180)


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def prior_code(competition) -> str:
    """A model-free solution: the training mode (label metrics) or mean of each target for every test row."""
    label = get_metric(competition.metric).kind == "label"
    return f"""\
import os
import pandas as pd
train = pd.read_csv(os.path.join(os.environ["DATA_DIR"], "train.csv"))
test = pd.read_csv(os.path.join(os.environ["DATA_DIR"], "test.csv"))
out = pd.DataFrame({{{competition.id_column!r}: test[{competition.id_column!r}]}})
for column in {list(competition.target_columns)!r}:
    out[column] = train[column].mode().iloc[0] if {label!r} else train[column].mean()
out.to_csv(os.environ["SUBMISSION_PATH"], index=False)
"""


def shuffled_half_code(competition) -> str:
    """The baseline, with the predictions of half the rows permuted among themselves: partly right."""
    return (
        baseline_code(competition.id)
        + f"""
import numpy as _np
_sub = pd.read_csv(os.environ["SUBMISSION_PATH"], dtype=str, keep_default_na=False)
_rng = _np.random.default_rng(0)
_rows = _rng.choice(len(_sub), size=len(_sub) // 2, replace=False)
_cols = [c for c in _sub.columns if c != {competition.id_column!r}]
_sub.loc[_rows, _cols] = _sub.loc[_rng.permutation(_rows), _cols].to_numpy()
_sub.to_csv(os.environ["SUBMISSION_PATH"], index=False)
"""
    )


class _FailingSandbox:
    """An executor whose every run fails in the sandbox itself, never in the solution."""

    name = "failing"

    def __init__(self) -> None:
        self.calls = 0

    def run(self, code, workdir, public_data, limits) -> ExecutionResult:
        self.calls += 1
        return ExecutionResult(Status.INFRA_ERROR, None, "", "", 0.0, 0.0, 0.0, self.name, message="no sandbox")


@pytest.fixture(scope="module")
def executor():
    return make_executor("auto")


@pytest.fixture(scope="module")
def proxy(executor, tmp_path_factory) -> CheapExecutionProxy:
    return CheapExecutionProxy(executor=executor, limits=LIMITS, root=tmp_path_factory.mktemp("proxies"), workers=2)


# --- the proxy competition (no sandbox) -----------------------------------------------------------


def test_the_split_is_byte_identical_under_a_seed_and_changes_with_it(pool_root, tmp_path) -> None:
    competition = read_competition(pool_root / "food-delivery-time")
    first = build_proxy_competition(competition, ProxySplit(seed=3), tmp_path / "a")
    again = build_proxy_competition(competition, ProxySplit(seed=3), tmp_path / "b")
    other = build_proxy_competition(competition, ProxySplit(seed=4), tmp_path / "c")
    for part in ("data/public/train.csv", "data/public/test.csv", "data/private/test_answer.csv"):
        assert (first.root / part).read_bytes() == (again.root / part).read_bytes()
    assert (first.root / "data/public/train.csv").read_bytes() != (other.root / "data/public/train.csv").read_bytes()
    # Reused, not rebuilt: the cached folder is returned as is.
    assert build_proxy_competition(competition, ProxySplit(seed=3), tmp_path / "a").root == first.root


def test_the_proxy_trains_on_fewer_rows_and_its_test_looks_like_the_real_test(pool_root, tmp_path) -> None:
    competition = read_competition(pool_root / "nyc-flight-delays")
    built = build_proxy_competition(competition, ProxySplit(train_fraction=0.4, val_fraction=0.2), tmp_path)
    public = built.competition.public_dir
    full_train = _read(competition.public_dir / "train.csv")
    train, test = _read(public / "train.csv"), _read(public / "test.csv")
    assert len(train) == built.train_rows == round(0.4 * len(full_train)) < len(full_train)
    assert built.rows_fraction == pytest.approx(0.4, abs=1e-3)
    assert list(test.columns) == list(_read(competition.public_dir / "test.csv").columns)
    assert set(train[competition.id_column]).isdisjoint(test[competition.id_column])
    sample = _read(built.competition.sample_submission_path)
    assert list(sample[competition.id_column]) == list(test[competition.id_column])
    # Side tables the solutions join on are carried over unchanged.
    for side in ("weather.csv", "planes.csv", "airlines.csv"):
        assert filecmp.cmp(public / side, competition.public_dir / side, shallow=False)
    assert not (public / "test_answer.csv").exists()


def test_the_proxy_answers_come_from_public_training_rows_and_never_the_private_answers(pool_root, tmp_path) -> None:
    competition = read_competition(pool_root / "telco-customer-churn")
    hidden = dataclasses.replace(
        competition, private_dir=tmp_path / "gone", answers_path=tmp_path / "gone" / "test_answer.csv"
    )
    built = build_proxy_competition(hidden, ProxySplit(), tmp_path / "proxies")
    answers = _read(built.competition.answers_path)
    train = _read(competition.public_dir / "train.csv").set_index(competition.id_column)
    private_ids = set(_read(competition.answers_path)[competition.id_column])
    assert set(answers[competition.id_column]) <= set(train.index)
    assert private_ids.isdisjoint(answers[competition.id_column])
    assert list(answers["churn"]) == list(train.loc[answers[competition.id_column], "churn"])
    # Same folder with or without the private files: nothing about them enters the proxy.
    assert build_proxy_competition(competition, ProxySplit(), tmp_path / "proxies").root == built.root
    assert built.competition.public_leaderboard_path == competition.public_leaderboard_path


def test_class_probability_targets_are_one_hot_answers_from_the_label_column(pool_root, tmp_path) -> None:
    competition = read_competition(pool_root / "leaf-species-flavia")
    built = build_proxy_competition(competition, ProxySplit(), tmp_path)
    answers = _read(built.competition.answers_path)
    onehot = answers[list(competition.target_columns)].astype(int)
    assert (onehot.sum(axis=1) == 1).all()
    species = _read(competition.public_dir / "train.csv").set_index("id").loc[answers["id"], "species"]
    assert list(onehot.idxmax(axis=1)) == list(species)


def test_a_competition_the_proxy_cannot_split_is_no_answer_with_a_reason(pool_root, tmp_path) -> None:
    sandbox = _FailingSandbox()
    proxy = CheapExecutionProxy(executor=sandbox, root=tmp_path)
    movielens = read_competition(pool_root / "movielens-next-favorites")
    assert proxy.predict(movielens, baseline_code(movielens.id)) is None
    assert "ids in train.csv repeat" in proxy.unsupported_reason(movielens)
    no_train = dataclasses.replace(read_competition(pool_root / "ames-house-prices"), public_dir=tmp_path / "empty")
    (tmp_path / "empty").mkdir()
    assert proxy.predict(no_train, "print(1)") is None
    assert "no train.csv" in proxy.unsupported_reason(no_train)
    assert sandbox.calls == 0


def test_the_embedded_pool_is_covered_as_documented(pool_root, tmp_path) -> None:
    proxy = CheapExecutionProxy(executor=_FailingSandbox(), root=tmp_path)
    uncovered = {cid for cid in POOL_IDS if proxy.proxy_competition(read_competition(pool_root / cid)) is None}
    assert uncovered == {"movielens-next-favorites"}


def test_split_settings_that_cannot_be_honoured_are_rejected() -> None:
    with pytest.raises(ValueError, match="at most 1"):
        ProxySplit(train_fraction=0.9, val_fraction=0.2)
    with pytest.raises(ValueError, match=r"\(0, 1\)"):
        ProxySplit(train_fraction=0.0)


def test_code_that_does_not_compile_is_predicted_without_running_it(pool_root, tmp_path) -> None:
    sandbox = _FailingSandbox()
    proxy = CheapExecutionProxy(executor=sandbox, root=tmp_path)
    prediction = proxy.predict(read_competition(pool_root / "telco-customer-churn"), "def broken(:\n")
    assert isinstance(proxy, Predictor)
    assert prediction.status is PredictedStatus.DOES_NOT_PARSE and sandbox.calls == 0
    assert "does not compile" in proxy_record(prediction)["reason"]


def test_a_sandbox_failure_is_an_error_alone_and_no_answer_in_a_batch(pool_root, tmp_path) -> None:
    proxy = CheapExecutionProxy(executor=_FailingSandbox(), root=tmp_path)
    competition = read_competition(pool_root / "telco-customer-churn")
    with pytest.raises(PredictorError, match="no sandbox"):
        proxy.predict(competition, "print(1)\n")
    assert proxy.predict_batch([(competition, "print(1)\n"), (competition, "print(2)\n")]) == [None, None]


def test_an_unwritable_proxy_cache_is_an_error_and_retried_not_remembered(pool_root, tmp_path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    proxy = CheapExecutionProxy(executor=_FailingSandbox(), root=blocker)
    competition = read_competition(pool_root / "telco-customer-churn")
    with pytest.raises(PredictorError, match="could not build the proxy"):
        proxy.predict(competition, "print(1)\n")
    assert proxy.predict_batch([(competition, "print(1)\n")]) == [None]
    blocker.unlink()
    assert proxy.proxy_competition(competition) is not None


# --- real runs on the proxy --------------------------------------------------------------------------


@pytest.mark.slow
def test_crashes_missing_and_invalid_files_get_their_statuses_and_score_zero(proxy, pool_root) -> None:
    competition = read_competition(pool_root / "credit-scoring-f1")
    codes = {
        "crash": "raise RuntimeError('boom')\n",
        "silent": "print('wrote nothing')\n",
        "invalid": "import os\nopen(os.environ['SUBMISSION_PATH'], 'w').write('wrong,columns\\n1,2\\n')\n",
        "prior": prior_code(competition),
    }
    crash, silent, invalid, prior = proxy.predict_batch([(competition, code) for code in codes.values()])
    assert crash.status is PredictedStatus.CRASHES and "error" in proxy_record(crash)["reason"]
    assert silent.status is PredictedStatus.NO_SUBMISSION and "no submission" in proxy_record(silent)["reason"]
    assert invalid.status is PredictedStatus.NO_SUBMISSION and "column" in proxy_record(invalid)["reason"]
    assert prior.status is PredictedStatus.VALID and 0 <= prior.position <= 1 and prior.metric is not None
    assert all(p.cost_s > 0 for p in (crash, silent, invalid, prior))
    scores = WorldModel(proxy).score([Rollout(competition, code) for code in codes.values()])
    assert [s.value for s in scores[:3]] == [0.0, 0.0, 0.0]
    assert scores[3].value == pytest.approx(prior.position)


@pytest.mark.slow
def test_predictions_do_not_need_the_private_answers(proxy, pool_root, tmp_path) -> None:
    competition = read_competition(pool_root / "credit-scoring-f1")
    hidden = dataclasses.replace(
        competition, private_dir=tmp_path / "gone", answers_path=tmp_path / "gone" / "test_answer.csv"
    )
    code = prior_code(competition)
    seen, blind = proxy.predict(competition, code), proxy.predict(hidden, code)
    assert blind.status is PredictedStatus.VALID
    assert (blind.position, blind.metric) == (seen.position, seen.metric)


@pytest.fixture(scope="module")
def ranked_runs(proxy, executor, pool_root, tmp_path_factory):
    """Baseline, half-shuffled baseline and prior on two competitions, run for real and through the proxy."""
    items = []
    for cid in RANKED:
        competition = read_competition(pool_root / cid)
        for name, code in (
            ("baseline", baseline_code(cid)),
            ("shuffled_half", shuffled_half_code(competition)),
            ("prior", prior_code(competition)),
        ):
            items.append((competition, name, code))

    def real(item):
        competition, name, code = item
        workdir = tmp_path_factory.mktemp(f"real-{competition.id}-{name}")
        return execute_and_grade(competition, code, executor, LIMITS, workdir)

    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(real, items))
    for (competition, _, code), outcome in zip(items, outcomes):
        proxy.record_full_run(competition.id, outcome.execution.wall_s, code)
    predictions = proxy.predict_batch([(c, code) for c, _, code in items])
    return items, outcomes, predictions


@pytest.mark.slow
def test_predicted_positions_rank_solutions_as_real_execution_does(ranked_runs) -> None:
    items, outcomes, predictions = ranked_runs
    assert all(o.grade.valid for o in outcomes), [o.grade.reason for o in outcomes]
    assert all(p is not None and p.status is PredictedStatus.VALID for p in predictions)
    real = [o.position for o in outcomes]
    predicted = [p.position for p in predictions]
    rho = spearmanr(predicted, real).statistic
    assert rho > 0.6, f"Spearman {rho:.2f}: predicted {predicted} vs real {real}"
    by_name = {(c.id, name): p.position for (c, name, _), p in zip(items, predictions)}
    for cid in RANKED:
        assert by_name[(cid, "baseline")] > by_name[(cid, "prior")]


@pytest.mark.slow
def test_the_uncertainty_is_the_validation_slices_bootstrap_spread(ranked_runs) -> None:
    _, _, predictions = ranked_runs
    spreads = [p.uncertainty for p in predictions]
    assert all(s is not None and 0 <= s < 0.5 for s in spreads), spreads
    assert max(spreads) > 0
    assert [json.loads(p.raw)["position_sd"] for p in predictions] == spreads


@pytest.mark.slow
def test_each_prediction_reports_its_cost_as_a_fraction_of_the_full_run(ranked_runs) -> None:
    _, outcomes, predictions = ranked_runs
    for outcome, prediction in zip(outcomes, predictions):
        record = json.loads(prediction.raw)
        assert record["full_run_basis"] == "same code"
        assert record["full_run_wall_s"] == pytest.approx(outcome.execution.wall_s)
        assert record["cost_fraction"] == pytest.approx(prediction.cost_s / outcome.execution.wall_s, abs=1e-3)
        # What the run learns from is a fraction of the real training data.
        assert record["train_rows"] < record["full_train_rows"] and record["rows_fraction"] < 0.5
