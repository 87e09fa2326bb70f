"""Task families: the trainer and `wmrl train` look a family up by name and never branch on it."""

from __future__ import annotations

import pytest
from wmrl_agents.grpo.config import preset
from wmrl_agents.grpo.task_families import (
    TASK_FAMILIES,
    TaskFamily,
    _resolve,
    register_task_family,
    task_family,
)


@pytest.mark.parametrize("name", sorted(TASK_FAMILIES))
def test_every_registered_family_names_hooks_that_exist(name: str) -> None:
    family = task_family(name)
    for hook in (family.collector, family.reward_source, family.evaluator):
        assert callable(_resolve(hook)), hook


def test_the_code_family_runs_in_a_sandbox_and_libero_in_the_simulator() -> None:
    assert task_family("mledojo").runs_in_sandbox and task_family("mledojo").default_policy == "program"
    assert not task_family("libero").runs_in_sandbox and task_family("libero").default_policy == "tiny-vla"


def test_the_code_familys_evaluator_measures_held_out_avg_at_k(pool_root) -> None:
    from wmrl_agents.policies.factory import make_policy

    config = preset("smoke").replace(eval_k=1, data_root=str(pool_root), max_turns=1)
    evaluate = task_family("mledojo").make_evaluator(config, "local")
    result = evaluate(make_policy("program", seed=0), "before")
    assert result["k"] == 1 and 0.0 <= result["overall_avg_at_k"] <= 1.0 and result["by_category"]


def test_an_unknown_family_names_the_registered_ones_and_a_clash_is_refused() -> None:
    with pytest.raises(KeyError, match="registered: .*mledojo"):
        task_family("atari")
    clash = TaskFamily("mledojo", "m:a", "m:b", "m:c", "program", True)
    with pytest.raises(ValueError, match="already registered"):
        register_task_family(clash)
