"""Wrappers: swap WMRL-MLEDojo-v0's reward source in one line, and step G sub-envs on one task as one group."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import wmrl_envs  # noqa: F401  (registers the environments)
from wmrl_envs.competition import Competition
from wmrl_envs.rewards import Corrected, RealExecution, Score, WorldModel
from wmrl_envs.world_models import Prediction
from wmrl_envs.wrappers import GroupVectorEnv, WithRewardSource

TASK = "telco-customer-churn"
G = 4


def _reply(value: float | None) -> str:
    marker = "# refuse" if value is None else f"# score={value}"
    return f"My solution:\n```python\n{marker}\nprint('hello')\n```\n"


def _marked(code: str) -> float | None:
    found = re.search(r"# score=([0-9.]+)", code)
    return None if found is None else float(found.group(1))


class MarkerPredictor:
    """A world-model stand-in: reads the score the test wrote into the code (squared: a biased model)."""

    def predict(self, competition: Competition, code: str) -> Prediction | None:
        value = _marked(code)
        return None if value is None else Prediction(position=value**2)


class MarkerReal:
    """A real-execution stand-in: the score the test wrote into the code."""

    name = "real"

    def score(self, batch):
        return [Score(v, "real") if (v := _marked(r.code)) is not None else Score(0.0, "real") for r in batch]


@pytest.fixture
def group(pool_root):
    envs = gym.make_vec(
        "WMRL-MLEDojo-v0", num_envs=G, vectorization_mode="sync", split="all", data_root=pool_root, max_turns=1
    )
    group = GroupVectorEnv(envs, Corrected(MarkerReal(), WorldModel(MarkerPredictor())))
    yield group
    group.close()


def test_with_reward_source_swaps_the_source_in_one_line(pool_root) -> None:
    base = gym.make("WMRL-MLEDojo-v0", task=TASK, data_root=pool_root, max_turns=2)
    original = base.unwrapped.reward_source
    env = WithRewardSource(base, WorldModel(MarkerPredictor()))
    env.reset(seed=0)
    assert base.unwrapped.reward_source is original, "the base env keeps its own source between calls"
    feedback, reward, terminated, _, info = env.step(_reply(0.5))
    assert reward == pytest.approx(0.25) and info["reward_source"] == "world_model" and not terminated
    assert "Predicted position score: 0.250" in feedback
    _, reward, terminated, _, info = env.step(_reply(None))
    assert reward == 0.0 and info["scored"] is False and terminated
    env.close()
    assert isinstance(original, RealExecution) and base.unwrapped.reward_source is original


def test_a_second_reward_source_wrapper_is_refused_instead_of_overriding_the_first(pool_root) -> None:
    env = WithRewardSource(gym.make("WMRL-MLEDojo-v0", task=TASK, data_root=pool_root), WorldModel(MarkerPredictor()))
    with pytest.raises(TypeError, match=r"already wrapped in WithRewardSource\(WorldModel\)"):
        WithRewardSource(gym.wrappers.RecordEpisodeStatistics(env), RealExecution())


def test_the_group_shares_one_task_and_is_scored_together(group) -> None:
    prompts, infos = group.reset(seed=3)
    assert len(prompts) == G and len(set(infos["task"])) == 1
    replies = (_reply(0.2), _reply(0.9), _reply(None), "```python\ndef broken(:\n```")
    _, rewards, terminated, truncated, infos = group.step(replies)
    assert terminated.all() and not truncated.any()
    assert len(set(infos["group_weight"])) == 1 and len(set(infos["group_source"])) == 1
    assert infos["group_source"][0] == "anchor", "the only group of a step is its anchor"
    assert 1.0 <= infos["group_weight"][0] <= 4.0
    assert rewards.tolist() == pytest.approx([0.2, 0.9, 0.0, 0.0])
    assert infos["scored"].tolist() == [True, True, True, True]
    assert infos["reward_source"][2] == "real" and infos["reward_source"][3] is None, "unparsable code is not scored"
    assert set(infos["group"]) >= {"calibrated", "anchor_weight", "residual_variance", "fallback_state"}


def test_the_group_autoresets_together_on_the_next_step(group) -> None:
    group.reset(seed=0)
    group.step(tuple(_reply(0.5) for _ in range(G)))
    prompts, rewards, terminated, _, infos = group.step(tuple(_reply(0.5) for _ in range(G)))
    assert rewards.tolist() == [0.0] * G and not terminated.any(), "a NEXT_STEP autoreset step does not score"
    assert len(set(infos["task"])) == 1 and all("submission" in p for p in prompts)
    _, rewards, terminated, _, infos = group.step(tuple(_reply(0.5) for _ in range(G)))
    expected = 0.5 if infos["group_source"][0] == "anchor" else 0.25  # anchors are ~10% of groups over the run
    assert terminated.all() and rewards.tolist() == pytest.approx([expected] * G)


def test_a_plain_reward_source_gives_the_group_weight_one(pool_root) -> None:
    envs = [gym.make("WMRL-MLEDojo-v0", task=TASK, data_root=pool_root, max_turns=1) for _ in range(2)]
    group = GroupVectorEnv(envs, WorldModel(MarkerPredictor()))
    group.reset(seed=0)
    _, rewards, _, _, infos = group.step((_reply(0.5), _reply(None)))
    assert rewards.tolist() == pytest.approx([0.25, 0.0])
    assert infos["scored"].tolist() == [True, False]
    assert infos["group_weight"].tolist() == [1.0, 1.0] and infos["group_source"][0] == "world_model"
    group.close()


def test_same_step_autoreset_reports_the_final_step_and_resets_at_once(pool_root) -> None:
    envs = [gym.make("WMRL-MLEDojo-v0", task=TASK, data_root=pool_root, max_turns=1) for _ in range(2)]
    group = GroupVectorEnv(envs, WorldModel(MarkerPredictor()), autoreset_mode=AutoresetMode.SAME_STEP)
    group.reset(seed=0)
    prompts, rewards, terminated, _, infos = group.step((_reply(0.5), _reply(1.0)))
    assert terminated.all() and rewards.tolist() == pytest.approx([0.25, 1.0])
    assert infos["final_info"]["position_score"].tolist() == pytest.approx([0.25, 1.0])
    assert all("Result of submission" in text for text in infos["final_obs"])
    assert all("submission" in p for p in prompts) and infos["task"].tolist() == [TASK, TASK]
    group.close()


def test_disabled_autoreset_needs_a_whole_group_reset(pool_root) -> None:
    envs = [gym.make("WMRL-MLEDojo-v0", task=TASK, data_root=pool_root, max_turns=1) for _ in range(2)]
    group = GroupVectorEnv(envs, WorldModel(MarkerPredictor()), autoreset_mode="Disabled")
    group.reset(seed=0)
    group.step((_reply(0.5), _reply(0.5)))
    with pytest.raises(RuntimeError, match="call reset"):
        group.step((_reply(0.5), _reply(0.5)))
    with pytest.raises(ValueError, match="resets together"):
        group.reset(options={"reset_mask": np.array([True, False])})
    group.reset(options={"reset_mask": np.array([True, True])})
    assert group.step((_reply(0.5), _reply(0.5)))[1].tolist() == pytest.approx([0.25, 0.25])
    group.close()


def test_sub_env_wrappers_compose_with_the_group(pool_root) -> None:
    def wrapped() -> gym.Env:
        env = gym.make("WMRL-MLEDojo-v0", task=TASK, data_root=pool_root, max_turns=2, max_episode_steps=1)
        return gym.wrappers.RecordEpisodeStatistics(gym.wrappers.TransformReward(env, lambda r: 10 * r))

    group = GroupVectorEnv([wrapped(), wrapped()], WorldModel(MarkerPredictor()), autoreset_mode="SameStep")
    group.reset(seed=0)
    _, rewards, terminated, truncated, infos = group.step((_reply(0.5), _reply(0.2)))
    assert rewards.tolist() == pytest.approx([2.5, 0.4]), "the sub-envs' own reward transforms apply"
    assert truncated.tolist() == [True, True] and terminated.tolist() == [False, False], "their time limit too"
    assert infos["final_info"]["episode"]["r"].tolist() == pytest.approx([2.5, 0.4])
    group.close()


def test_a_sub_env_wrapper_that_changes_the_reply_is_refused_clearly(pool_root) -> None:
    env = gym.make("WMRL-MLEDojo-v0", task=TASK, data_root=pool_root, max_turns=1)
    group = GroupVectorEnv(
        [gym.wrappers.TransformAction(env, str.upper, env.action_space)], WorldModel(MarkerPredictor())
    )
    group.reset(seed=0)
    with pytest.raises(RuntimeError, match="changed the reply after the group scored it"):
        group.step((_reply(0.5),))
    group.close()


def test_sub_envs_with_their_own_reward_source_or_no_group_scoring_are_refused(pool_root) -> None:
    env = gym.make("WMRL-MLEDojo-v0", task=TASK, data_root=pool_root)
    with pytest.raises(TypeError, match="drop the sub-env wrapper"):
        GroupVectorEnv([WithRewardSource(env, WorldModel(MarkerPredictor()))], WorldModel(MarkerPredictor()))
    with pytest.raises(TypeError, match="begin_step"):
        GroupVectorEnv([gym.make("CartPole-v1").unwrapped], WorldModel(MarkerPredictor()))
    with pytest.raises(TypeError, match="reward_source must be a RewardSource"):
        WithRewardSource(env, object())  # type: ignore[arg-type]
