"""RealExecution: the ground-truth reward source, through the real sandbox and grader."""

from __future__ import annotations

import dataclasses

import pytest
from wmrl_tasks.mledojo.pool.baselines import baseline_code
from wmrl_tasks.mledojo.readers import read_competition

from wmrl_envs.rewards import RealExecution, RewardSource, Rollout
from wmrl_envs.sandbox import Limits

TASK = "telco-customer-churn"


@pytest.fixture(scope="module")
def source() -> RealExecution:
    return RealExecution(limits=Limits(wall_time_s=120), workers=2)


@pytest.mark.slow
def test_scores_are_position_scores_and_crashes_score_zero_not_none(source, pool_root) -> None:
    competition = read_competition(pool_root / TASK)
    batch = [
        Rollout(competition, baseline_code(TASK)),
        Rollout(competition, "raise SystemExit(3)\n"),
        Rollout(competition, "print('no file')\n"),
    ]
    good, crashed, silent = source.score(batch)
    assert isinstance(source, RewardSource)
    assert good is not None and good.source == "real"
    assert good.value == pytest.approx(good.outcome.grade.position.average) and 0 < good.value <= 1
    assert crashed is not None and crashed.value == 0.0 and crashed.outcome.execution.status.value == "error"
    assert silent is not None and silent.value == 0.0 and "no submission" in silent.outcome.grade.reason


def test_an_infrastructure_failure_is_could_not_score(source, pool_root, tmp_path) -> None:
    competition = read_competition(pool_root / TASK)
    broken = dataclasses.replace(competition, public_dir=tmp_path / "vanished")
    assert source.score([Rollout(broken, "print(1)\n")]) == [None]


def test_workers_must_be_positive() -> None:
    with pytest.raises(ValueError, match="workers"):
        RealExecution(workers=0)
