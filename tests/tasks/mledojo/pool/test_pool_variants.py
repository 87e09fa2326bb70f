"""The degraded variants of a baseline really span the quality range world models are measured on."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from wmrl_tasks.mledojo.pool import POOL_IDS
from wmrl_tasks.mledojo.pool.variants import VARIANTS, solution_variants
from wmrl_tasks.mledojo.readers import read_competition

from wmrl_envs.outcome import execute_and_grade
from wmrl_envs.sandbox import Limits, Status, make_executor


@pytest.mark.parametrize("competition_id", POOL_IDS)
def test_every_variant_is_valid_python(pool_root: Path, competition_id: str) -> None:
    competition = read_competition(pool_root / competition_id)
    for name, code in solution_variants(competition).items():
        ast.parse(code, filename=f"{competition_id}:{name}")


def test_unknown_variant_names_the_choices(pool_root: Path) -> None:
    competition = read_competition(pool_root / POOL_IDS[0])
    with pytest.raises(KeyError, match="shuffled_half"):
        solution_variants(competition, ["baseline", "bogus"])


@pytest.mark.slow
def test_variants_order_from_crash_to_baseline(pool_root: Path, tmp_path: Path) -> None:
    competition = read_competition(pool_root / "credit-scoring-f1")
    executor = make_executor("auto")
    outcomes = {
        name: execute_and_grade(competition, code, executor, Limits(wall_time_s=120), tmp_path / name)
        for name, code in solution_variants(competition, VARIANTS).items()
    }
    assert outcomes["crash"].execution.status is Status.ERROR
    for name in ("baseline", "less_data", "shuffled_half", "prior"):
        assert outcomes[name].grade.valid, (name, outcomes[name].grade.reason)
    assert outcomes["baseline"].grade.score > outcomes["shuffled_half"].grade.score
    assert outcomes["baseline"].position > outcomes["prior"].position
