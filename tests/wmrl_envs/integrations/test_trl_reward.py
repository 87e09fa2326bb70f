"""The TRL reward function: groups become Corrected groups, weights reach the rewards, and GRPOTrainer runs on it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from wmrl_envs.competition import Category, Competition
from wmrl_envs.integrations.trl import completion_text, trl_reward_func
from wmrl_envs.rewards import Corrected, RealExecution, Score, WorldModel
from wmrl_envs.sandbox import Limits
from wmrl_envs.world_models import Prediction

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "world_models"))
from llm_helpers import tiny_chat_model  # the shared tiny LM, found by path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TASK = "telco-customer-churn"
TOY = Competition(
    id="toy",
    description="",
    metric="rmse",
    higher_is_better=False,
    category=Category.REGRESSION,
    id_column="id",
    target_columns=("y",),
    public_dir=Path("/nonexistent"),
    private_dir=Path("/nonexistent"),
    answers_path=Path("/nonexistent/a.csv"),
    sample_submission_path=Path("/nonexistent/s.csv"),
)


class Fixed:
    """A world-model stand-in that predicts 0.5 for everything except code mentioning 'refuse'."""

    def predict(self, competition, code):
        return None if "refuse" in code else Prediction(position=0.5)


class LengthReal:
    """A real-execution stand-in: longer programs score higher."""

    name = "real"

    def score(self, batch):
        return [Score(min(len(r.code) / 100, 1.0), "real") for r in batch]


def _call(func, prompts, completions, tasks, **extra):
    return func(prompts=prompts, completions=completions, completion_ids=None, task=tasks, trainer_state=None, **extra)


def test_completions_of_one_prompt_form_one_weighted_group() -> None:
    corrected = Corrected(LengthReal(), WorldModel(Fixed()))
    func = trl_reward_func(corrected, {"toy": TOY})
    prompts = ["p1"] * 3 + ["p2"] * 3
    completions = ["x = 1", "x = 22", "def broken(:", "y = 1", "# refuse\ny = 2", "y = 333"]
    metrics, extra = {}, {}
    rewards = _call(
        func, prompts, completions, ["toy"] * 6, log_metric=metrics.__setitem__, log_extra=extra.__setitem__
    )
    sources = extra["wmrl_group_source"]
    assert (
        sources[:3] == [sources[0]] * 3
        and sources[3:] == [sources[3]] * 3
        and {sources[0], sources[3]}
        == {
            "anchor",
            "world_model",
        }
    )
    anchor_weight = corrected.diagnostics()["weighter"]["anchor_weight"]  # nothing measured yet: the maximum, 4
    assert rewards[2] == 0.0, "a reply without parsable code is a real 0, not sent to the sources"
    scores = [len(c) / 100 if source == "anchor" else 0.5 for c, source in zip(completions, sources)]
    scores[2] = None  # the unparsable reply's 0 says nothing about the group's scale
    scales = {
        source: [r / v for r, v, s in zip(rewards, scores, sources) if s == source and r is not None and v]
        for source in set(sources)
    }
    anchor_scale, world_model_scale = scales["anchor"][0], scales["world_model"][0]
    assert all(x == pytest.approx(anchor_scale) for x in scales["anchor"])
    assert all(x == pytest.approx(world_model_scale) for x in scales["world_model"])
    assert anchor_scale / world_model_scale == pytest.approx(anchor_weight), "the weights' ratio is kept"
    scored = [source for r, source in zip(rewards, sources) if r is not None]
    total = sum(anchor_scale if source == "anchor" else world_model_scale for source in scored)
    assert total == pytest.approx(len(scored)), "normalised: the weights average 1 over the scored completions"
    if sources[4] == "world_model":
        assert rewards[4] is None, "a completion the world model could not score stays None"
    assert metrics["wmrl/anchor_fraction"] == 0.5 and metrics["wmrl/scored_fraction"] >= 5 / 6 - 1e-9


def test_unweighted_rewards_and_none_pass_through_unchanged() -> None:
    func = trl_reward_func(WorldModel(Fixed()), {"toy": TOY}, apply_weights=False, name="wm")
    rewards = _call(func, ["p"] * 3, ["a = 1", "# refuse\na = 2", "not python ("], ["toy"] * 3)
    assert rewards == [0.5, None, 0.0] and func.__name__ == "wm"


def test_conversational_completions_are_read_from_the_last_message() -> None:
    assert completion_text([{"role": "assistant", "content": "```python\nx=1\n```"}]) == "```python\nx=1\n```"
    parts = [{"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]
    assert completion_text(parts) == "ab"
    with pytest.raises(TypeError, match="str or a list of chat messages"):
        completion_text(42)


def test_a_missing_task_column_or_unknown_task_says_what_to_fix() -> None:
    func = trl_reward_func(WorldModel(Fixed()), {"toy": TOY}, task_column="competition")
    with pytest.raises(KeyError, match="column 'competition'.*\\['task'\\]"):
        _call(func, ["p"], ["x = 1"], ["toy"])
    with pytest.raises(KeyError, match="unknown task 'nope'.*toy"):
        _call(trl_reward_func(WorldModel(Fixed()), {"toy": TOY}), ["p"], ["x = 1"], ["nope"])


@pytest.mark.slow
def test_grpo_trainer_trains_two_steps_on_wmrl_rewards(pool_root, tmp_path) -> None:
    torch = pytest.importorskip("torch")
    trl = pytest.importorskip("trl")
    datasets = pytest.importorskip("datasets")
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from wmrl_tasks.mledojo.readers import read_competition

    torch.set_num_threads(1)
    torch.manual_seed(0)
    path = tiny_chat_model(tmp_path / "model")
    competition = read_competition(pool_root / TASK)
    corrected = Corrected(RealExecution(limits=Limits(wall_time_s=30), workers=2), WorldModel(Fixed()))
    reward = trl_reward_func(corrected, {TASK: competition}, num_generations=4)
    calls: list[list] = []

    def recorded(**kwargs):
        rewards = reward(**kwargs)
        calls.append(rewards)
        return rewards

    recorded.__name__ = "wmrl"
    prompt = [{"role": "user", "content": "Write a solution for the churn competition."}]
    dataset = datasets.Dataset.from_list([{"prompt": prompt, "task": TASK}] * 8)
    config = tiny_grpo_config(
        tmp_path / "out", per_device_train_batch_size=8, num_generations=4, max_completion_length=12, max_steps=2
    )
    trainer = trl.GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(path),
        processing_class=AutoTokenizer.from_pretrained(path),
        reward_funcs=[recorded],
        args=config,
        train_dataset=dataset,
    )
    trainer.train()

    assert len(calls) == 2 and all(len(rewards) == 8 for rewards in calls)
    assert all(r is None or 0.0 <= r <= 4.0 for rewards in calls for r in rewards)
    logged = [entry for entry in trainer.state.log_history if "rewards/wmrl/mean" in entry]
    assert len(logged) == 2 and all("wmrl/anchor_fraction" in entry for entry in logged)
    assert corrected.scheduler.diagnostics()["total_groups"] == 4, "two steps of two GRPO groups each"


def test_the_dataset_holds_each_tasks_reset_prompt_and_the_lookup_the_reward_function_needs(pool_root) -> None:
    pytest.importorskip("datasets")
    import gymnasium as gym

    from wmrl_envs.integrations.trl import trl_dataset

    dataset, competitions = trl_dataset("held-out", data_root=pool_root)
    assert dataset.column_names == ["prompt", "task"] and len(dataset) == len(competitions) > 1
    env = gym.make("WMRL-MLEDojo-v0", split="held-out", data_root=pool_root, max_turns=1)
    row = dataset[0]
    expected, _ = env.reset(options={"task": row["task"]})
    assert row["prompt"] == [{"role": "user", "content": expected}]
    assert competitions[row["task"]].id == row["task"]

    texts, _ = trl_dataset(env, conversational=False)
    assert texts["prompt"][0] == expected and texts["task"] == dataset["task"]
    env.close()


def test_a_dataset_from_something_that_is_not_a_wmrl_env_is_refused() -> None:
    pytest.importorskip("datasets")
    import gymnasium as gym

    from wmrl_envs.integrations.trl import trl_dataset

    with pytest.raises(TypeError, match="WMRL-MLEDojo-v0 environment or a split name"):
        trl_dataset(gym.make("CartPole-v1"))


def test_logs_carry_the_unweighted_mean_beside_the_weighted_rewards() -> None:
    corrected = Corrected(LengthReal(), WorldModel(Fixed()))
    metrics: dict = {}
    rewards = _call(
        trl_reward_func(corrected, {"toy": TOY}),
        ["p"] * 2,
        ["x = 1", "x = 22"],
        ["toy"] * 2,
        log_metric=metrics.__setitem__,
    )
    assert metrics["wmrl/unweighted_reward_mean"] == pytest.approx((0.05 + 0.06) / 2)
    assert metrics["wmrl/mean_group_weight"] >= 1.0, "the raw weight is logged"
    assert sum(rewards) / 2 == pytest.approx(metrics["wmrl/unweighted_reward_mean"]), "one group: normalised to 1"


def tiny_grpo_config(out: Path, **settings):
    """A GRPOConfig for a CPU test run of a tiny model: Dr. GRPO scaling, no KL, logs every step, saves nothing."""
    import trl

    defaults = {"learning_rate": 1e-4, "scale_rewards": "none", "beta": 0.0, "logging_steps": 1, "report_to": "none"}
    return trl.GRPOConfig(
        output_dir=str(out), save_strategy="no", use_cpu=True, bf16=False, seed=0, **{**defaults, **settings}
    )
