"""Multi-turn TRL: each rollout is a WMRL episode whose `submit` tool is env.step, and its reward the episode's return."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wmrl_envs.integrations.trl_environment import MLEDojoToolEnvironment, mledojo_environment_factory
from wmrl_envs.rewards import WorldModel
from wmrl_envs.world_models import Prediction

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TASK = "telco-customer-churn"
PROGRAM = "```python\nimport pandas as pd\nprint('a submission')\n```"


class Fixed:
    """A world model that places every program at 0.4 (no sandbox runs: the test is about the episode)."""

    def predict(self, competition, code):
        return Prediction(position=0.4)


def test_submit_steps_the_episode_and_the_reward_is_its_return(pool_root: Path) -> None:
    factory = mledojo_environment_factory(
        split="held-out", data_root=pool_root, max_turns=2, reward_source=WorldModel(Fixed())
    )
    environment = factory()
    assert environment.reset(task=TASK, prompt=[{"role": "user", "content": "..."}]) is None
    first = environment.submit(PROGRAM)
    assert "Predicted position score: 0.400" in first and "Submissions left: 1." in first, first
    assert environment.get_reward() == pytest.approx(0.4)
    environment.submit("def broken(:")
    assert environment.get_reward() == pytest.approx(0.4), "the return is the best position, not a sum"
    assert "episode is over" in environment.submit(PROGRAM)
    environment.reset(task=TASK)
    assert environment.get_reward() == 0.0


def test_anything_but_a_wmrl_code_env_is_refused() -> None:
    import gymnasium as gym

    with pytest.raises(TypeError, match="WMRL-MLEDojo-v0"):
        MLEDojoToolEnvironment(gym.make("CartPole-v1"))


@pytest.mark.slow
def test_grpo_trainer_runs_rollouts_in_wmrl_episodes(pool_root: Path, tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    trl = pytest.importorskip("trl")
    from test_trl_reward import _tiny_model_and_tokenizer, tiny_grpo_config
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl.chat_template_utils import qwen3_chat_template

    from wmrl_envs.integrations.trl import trl_dataset

    torch.set_num_threads(1)
    torch.manual_seed(0)
    path = _tiny_model_and_tokenizer(tmp_path)
    tokenizer = AutoTokenizer.from_pretrained(path)
    tokenizer.chat_template = qwen3_chat_template  # a template that renders tool calls, which TRL requires
    dataset, _ = trl_dataset("held-out", data_root=pool_root, max_turns=2)
    dataset = dataset.select(range(2))
    seen: list[str] = []

    class Recorded(MLEDojoToolEnvironment):
        def reset(self, task: str, **row) -> None:
            seen.append(task)
            super().reset(task, **row)

    make = mledojo_environment_factory(
        data_root=pool_root, split="held-out", max_turns=2, reward_source=WorldModel(Fixed())
    )
    config = tiny_grpo_config(
        tmp_path / "out", per_device_train_batch_size=4, num_generations=2, max_completion_length=8, max_steps=1
    )
    trainer = trl.GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(path),
        processing_class=tokenizer,
        args=config,
        train_dataset=dataset,
        environment_factory=lambda: Recorded(make().env),
    )
    trainer.train()
    assert sorted(set(seen)) == sorted(dataset["task"]), "every rollout reset its env onto its row's task"
    logged = [entry for entry in trainer.state.log_history if "rewards/Recorded/mean" in entry]
    assert len(logged) == 1 and logged[0]["rewards/Recorded/mean"] == 0.0, "a random model submits nothing: 0"
