"""WMRL-MLEDojo-v0 through gym.make: prompts, real sandboxed runs, grading, rewards."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from wmrl_tasks.mledojo.pool import pool_split
from wmrl_tasks.mledojo.pool.baselines import baseline_code

import wmrl_envs  # noqa: F401  (registers the environments)
from wmrl_envs.rewards import RealExecution

FAST_TASK = "telco-customer-churn"


@pytest.fixture
def env(pool_root):
    env = gym.make("WMRL-MLEDojo-v0", task=FAST_TASK, data_root=pool_root, max_turns=3, time_limit_s=120)
    yield env
    env.close()


def test_reset_returns_a_prompt_that_states_the_submission_contract(env) -> None:
    prompt, info = env.reset(seed=0)
    for needle in ("DATA_DIR", "OUTPUT_DIR", "SUBMISSION_PATH", "sample_submission.csv", "3 submission(s) left"):
        assert needle in prompt
    assert info["task"] == FAST_TASK
    assert info["metric"] in prompt


@pytest.mark.slow
def test_an_episode_rewards_the_best_position_once(env) -> None:
    env.reset(seed=0)
    reply = f"Here is my solution.\n```python\n{baseline_code(FAST_TASK)}```\n"
    feedback, reward, terminated, truncated, info = env.step(reply)
    assert info["valid"], info["reason"]
    assert info["exec"]["status"] == "ok"
    assert 0.0 < reward <= 1.0
    assert reward == pytest.approx(info["position"]["average"])
    assert "Position score" in feedback and not terminated and not truncated

    _, again, terminated, _, info_again = env.step(reply)
    assert again == 0.0, "resubmitting the same file must not earn more"
    assert info_again["best_position"] == pytest.approx(reward)

    _, last, terminated, _, _ = env.step("```python\nprint('no submission')\n```")
    assert last == 0.0 and terminated
    with pytest.raises(RuntimeError, match="reset"):
        env.step("print(1)")


@pytest.mark.slow
def test_a_malformed_submission_scores_zero_with_a_reason(env) -> None:
    env.reset(seed=0)
    code = "import os\nopen(os.environ['SUBMISSION_PATH'], 'w').write('id,wrong\\n1,2\\n')\n"
    feedback, reward, _, _, info = env.step(code)
    assert reward == 0.0
    assert not info["valid"] and info["reason"]
    assert "Submission invalid" in feedback


def test_code_that_does_not_parse_is_not_run(env) -> None:
    env.reset(seed=0)
    feedback, reward, _, _, info = env.step("```python\ndef broken(:\n```")
    assert reward == 0.0 and info["exec"] is None
    assert "SyntaxError" in info["reason"] and "Not run" in feedback


def test_seeded_resets_choose_the_same_task(pool_root) -> None:
    env = gym.make("WMRL-MLEDojo-v0", split="all", data_root=pool_root)
    first = [env.reset(seed=s)[1]["task"] for s in range(6)]
    second = [env.reset(seed=s)[1]["task"] for s in range(6)]
    assert first == second
    assert env.reset(options={"task": FAST_TASK})[1]["task"] == FAST_TASK
    env.close()


def test_the_held_out_split_only_offers_held_out_tasks(pool_root) -> None:
    env = gym.make("WMRL-MLEDojo-v0", split="held-out", data_root=pool_root)
    seen = {env.reset(seed=s)[1]["task"] for s in range(20)}
    assert seen <= set(pool_split()["held-out"])
    env.close()


@pytest.mark.slow
def test_the_environment_passes_gymnasiums_checker(pool_root) -> None:
    env = gym.make("WMRL-MLEDojo-v0", task=FAST_TASK, data_root=pool_root, max_turns=2, time_limit_s=30)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_bad_arguments_get_clear_errors(pool_root) -> None:
    with pytest.raises(KeyError, match="known ids"):
        gym.make("WMRL-MLEDojo-v0", task="no-such-task", data_root=pool_root)
    with pytest.raises(ValueError, match="split"):
        gym.make("WMRL-MLEDojo-v0", split="validation", data_root=pool_root)
    with pytest.raises(ValueError, match="max_turns"):
        gym.make("WMRL-MLEDojo-v0", task=FAST_TASK, data_root=pool_root, max_turns=0)
    with pytest.raises(ValueError, match="executor"):
        gym.make(
            "WMRL-MLEDojo-v0",
            task=FAST_TASK,
            data_root=pool_root,
            executor="local",
            reward_source=RealExecution("local"),
        )
