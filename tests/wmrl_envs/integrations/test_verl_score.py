"""verl compute_score: a real solution earns its real position; unscored samples say so; batches form groups."""

from __future__ import annotations

import pytest
from wmrl_tasks.mledojo.pool.baselines import baseline_code
from wmrl_tasks.mledojo.readers import read_competition

from wmrl_envs.integrations.verl import make_batch_compute_score, make_compute_score
from wmrl_envs.rewards import Corrected, RealExecution, Score, WorldModel
from wmrl_envs.sandbox import Limits
from wmrl_envs.world_models import Prediction

TASK = "telco-customer-churn"


class Fixed:
    """A world-model stand-in: 0.5 for everything, no answer for code mentioning 'refuse'."""

    def predict(self, competition, code):
        return None if "refuse" in code else Prediction(position=0.5)


class Constant:
    """A real-execution stand-in scoring every program 0.25."""

    name = "real"

    def score(self, batch):
        return [Score(0.25, "real") for _ in batch]


@pytest.fixture(scope="module")
def competitions(pool_root):
    return {TASK: read_competition(pool_root / TASK)}


@pytest.mark.slow
def test_a_real_solution_earns_its_real_position(competitions) -> None:
    compute_score = make_compute_score(RealExecution(limits=Limits(wall_time_s=120)), competitions)
    reply = f"I will fit a logistic regression.\n```python\n{baseline_code(TASK)}```"
    result = compute_score("wmrl/mledojo", reply, TASK)
    assert result["scored"] == 1.0 and result["weight"] == 1.0
    assert 0.0 < result["score"] <= 1.0


def test_unparsable_and_unscored_samples_are_told_apart(competitions) -> None:
    compute_score = make_compute_score(WorldModel(Fixed()), competitions)
    assert compute_score("wmrl/mledojo", "def broken(:", TASK) == {
        "score": 0.0,
        "scored": 1.0,
        "weight": 1.0,
        "scale": 1.0,
    }
    assert compute_score("wmrl/mledojo", "# refuse\nx = 1", None, {"task": TASK})["scored"] == 0.0
    assert compute_score("wmrl/mledojo", "x = 1", TASK)["score"] == 0.5
    with pytest.raises(KeyError, match="unknown task 'nope'"):
        compute_score("wmrl/mledojo", "x = 1", "nope")
    with pytest.raises(ValueError, match="no task id"):
        compute_score("wmrl/mledojo", "x = 1", None)


def test_the_batch_function_scores_consecutive_samples_of_a_task_as_one_group(competitions) -> None:
    corrected = Corrected(Constant(), WorldModel(Fixed()))
    compute_score = make_batch_compute_score(corrected, competitions)
    results = compute_score(["wmrl/mledojo"] * 4, ["a = 1", "b = 2", "c = 3", "d = 4"], [TASK] * 4, None)
    assert corrected.scheduler.diagnostics()["total_groups"] == 1
    weight = results[0]["weight"]
    expected = {"score": 0.25, "scored": 1.0, "weight": weight, "scale": 1.0}  # one group: its weight normalises to 1
    assert 1.0 <= weight <= 4.0 and all(r == expected for r in results)
