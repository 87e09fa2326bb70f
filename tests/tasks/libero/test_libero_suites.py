"""Suites, their episode limits and the official initial states a run may start from."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from wmrl_tasks.libero.suites import (
    EPISODE_LIMITS,
    check_suite,
    parse_index_list,
    parse_init_states,
    select_init_states,
)


def test_episode_limits_are_liberos_evaluation_protocol():
    assert EPISODE_LIMITS == {
        "libero_spatial": 220,
        "libero_object": 280,
        "libero_goal": 300,
        "libero_10": 520,
        "libero_90": 400,
    }


def test_training_uses_the_first_16_starts_and_evaluation_all_50():
    assert select_init_states("train") == tuple(range(16))
    assert select_init_states("eval") == tuple(range(50))
    assert select_init_states([3, 49]) == (3, 49)


@pytest.mark.parametrize(
    ("choice", "message"), [("test", "one of"), ([], "non-empty"), ([0, 50, True], r"bad: \[50, True\]")]
)
def test_an_unknown_set_of_starts_is_refused(choice, message: str):
    with pytest.raises(ValueError, match=message):
        select_init_states(choice)


def test_an_unknown_suite_lists_the_real_ones():
    with pytest.raises(
        ValueError, match="libero_100.*libero_spatial, libero_object, libero_goal, libero_10, libero_90"
    ):
        check_suite("libero_100")


def test_importing_wmrl_registers_the_env_without_loading_libero_or_torch():
    code = (
        "import sys, gymnasium as gym, wmrl_envs, wmrl_tasks.libero\n"
        "spec = gym.spec('WMRL-LIBERO-v0')\n"
        "print(spec.entry_point, spec.max_episode_steps, [m for m in ('libero', 'robosuite', 'torch') if m in sys.modules])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.split() == ["wmrl_tasks.libero.env:LiberoEnv", "None", "[]"]


@given(st.lists(st.tuples(st.integers(0, 60), st.integers(0, 5), st.booleans()), min_size=1, max_size=6))
def test_index_lists_read_numbers_and_ranges_in_the_order_written(parts: list[tuple[int, int, bool]]) -> None:
    text = ",".join(f"{low}-{low + span}" if as_range else str(low) for low, span, as_range in parts)
    expected = [i for low, span, as_range in parts for i in (range(low, low + span + 1) if as_range else [low])]
    assert parse_index_list(text, "--init-states") == tuple(expected)


@pytest.mark.parametrize("text", ["", "a", "3-1", "-2", "+2", "1_0", "1,,2", "0-", "1.5", "train"])
def test_a_malformed_index_list_names_the_flag_and_shows_the_form(text: str) -> None:
    with pytest.raises(ValueError, match=r"--eval-init-states takes integers like '0,3,7' or ranges like '40-47'"):
        parse_index_list(text, "--eval-init-states")


def test_init_states_from_the_command_line_are_a_named_set_or_indices():
    assert parse_init_states("train") == "train" and parse_init_states("eval") == "eval"
    assert select_init_states(parse_init_states("40-42,7")) == (40, 41, 42, 7)
    with pytest.raises(ValueError, match=r"--init-states names 50, but only 0-49 exist"):
        parse_init_states("40-50")


def test_a_range_too_long_to_be_meant_is_refused_before_it_is_built():
    with pytest.raises(ValueError, match=r"--seeds names 100000000 values \(at most 10000\)"):
        parse_index_list("0-99999999", "--seeds")
