"""Every pool competition ships a baseline that runs in the real sandbox and places on its boards, below their top.

The baselines prove end to end that a competition is solvable as described: the public files
carry enough to fit a model, the submission format in the description is the one the grader
accepts, and the reference boards are in the metric's units (a sane model lands on them).
"""

from __future__ import annotations

import ast
from importlib import resources
from pathlib import Path

import pytest
from wmrl_tasks.mledojo.pool import POOL_IDS, build_pool
from wmrl_tasks.mledojo.pool.baselines import baseline_code
from wmrl_tasks.mledojo.readers import read_competition

from wmrl_envs.outcome import execute_and_grade
from wmrl_envs.sandbox import Executor, Limits, Status, make_executor

SOLUTIONS = resources.files("wmrl_tasks.mledojo.pool") / "solutions"
ALLOWED_IMPORTS = {"os", "numpy", "pandas", "sklearn"}
# Each baseline takes a few seconds on one core; the margin absorbs a loaded CI machine.
LIMITS = Limits(wall_time_s=120, memory_mb=4096)
# A baseline at the top of its boards leaves a policy that beats it no reward to climb for.
HEADROOM_POSITION = 0.97


def test_every_pool_competition_has_exactly_one_baseline() -> None:
    shipped = {entry.name.removesuffix(".py") for entry in SOLUTIONS.iterdir() if entry.name.endswith(".py")}
    assert shipped == set(POOL_IDS)


@pytest.mark.parametrize("competition_id", POOL_IDS)
def test_baselines_use_only_numpy_pandas_and_sklearn(competition_id: str) -> None:
    tree = ast.parse(baseline_code(competition_id))
    assert ast.get_docstring(tree), f"{competition_id}.py needs a docstring saying what the baseline does"
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert {name.split(".")[0] for name in imported} <= ALLOWED_IMPORTS


@pytest.fixture(scope="module")
def executor() -> Executor:
    return make_executor("auto")


@pytest.mark.slow
@pytest.mark.parametrize("competition_id", POOL_IDS)
def test_baseline_runs_in_the_sandbox_and_places_on_the_boards(
    isolated_cache: Path, executor: Executor, tmp_path: Path, competition_id: str
) -> None:
    # The session's isolated cache is the default root, so `pool_root` and this test share builds.
    root = build_pool(ids=[competition_id])
    competition = read_competition(root / competition_id)
    outcome = execute_and_grade(competition, baseline_code(competition_id), executor, LIMITS, tmp_path / "work")

    assert outcome.execution.status is Status.OK, outcome.execution.stderr[-2000:]
    assert outcome.grade.valid, outcome.grade.reason
    if competition.private_leaderboard_path is not None:
        assert outcome.position > 0, f"score {outcome.grade.score} is below every team on the boards"
        assert outcome.position < HEADROOM_POSITION, (
            f"the baseline places at {outcome.position:.3f}: its boards have no teams above it to beat"
        )
