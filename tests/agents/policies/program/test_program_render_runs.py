"""Rendered recipes really run in the sandbox and produce valid submissions, across every answer format."""

from __future__ import annotations

import pytest
from wmrl_agents.policies.program import make_recipe, render_solution, task_profile
from wmrl_tasks.mledojo.catalog import load_competitions

from wmrl_envs.outcome import execute_and_grade
from wmrl_envs.sandbox import Limits, Status, make_executor

pytestmark = pytest.mark.slow

RUNS = {
    "prior-scores": ("telco-customer-churn", {"model": "prior"}),
    "boosting-scores": ("telco-customer-churn", {"model": "hist_gbm", "categorical": "native"}),
    "tuned-cut-labels": ("credit-scoring-f1", {"model": "tree", "decision": "metric_aware", "missing": "median_flags"}),
    "class-probabilities": (
        "leaf-species-flavia",
        {"model": "linear", "scaling": "standard", "decision": "metric_aware", "validation": "holdout"},
    ),
    "multi-target-values": ("chicago-l-ridership", {"model": "hist_gbm", "capacity": "low", "target": "log1p"}),
    "stacked-text": (
        "tweet-device-source",
        {"model": "hist_gbm", "capacity": "low", "text": "stacked", "rows": "quarter"},
    ),
    "ranking": ("movielens-next-favorites", {"ranker": "loved", "window": "era_narrow"}),
}


@pytest.fixture(scope="module")
def executor():
    return make_executor("auto")


@pytest.fixture(scope="module")
def pool(pool_root):
    return {c.id: c for c in load_competitions("all", pool_root)}


@pytest.fixture(scope="module")
def outcomes(pool, executor, tmp_path_factory):
    results = {}
    for name, (competition_id, choices) in RUNS.items():
        competition = pool[competition_id]
        code = render_solution(task_profile(competition), make_recipe(task_profile(competition), **choices))
        workdir = tmp_path_factory.mktemp(name)
        results[name] = execute_and_grade(competition, code, executor, Limits(wall_time_s=180), workdir)
    return results


@pytest.mark.parametrize("name", sorted(RUNS))
def test_the_rendered_solution_runs_and_its_submission_is_valid(outcomes, name):
    outcome = outcomes[name]
    assert outcome.execution.status is Status.OK, outcome.execution.stderr[-2000:]
    assert outcome.grade.valid, outcome.grade.reason
    assert 0.0 <= outcome.position <= 1.0


def test_a_good_recipe_outranks_the_prior(outcomes):
    assert outcomes["boosting-scores"].position > outcomes["prior-scores"].position + 0.3


def test_the_holdout_check_prints_the_competition_metric(outcomes):
    assert "holdout multiclass_log_loss:" in outcomes["class-probabilities"].execution.stdout
