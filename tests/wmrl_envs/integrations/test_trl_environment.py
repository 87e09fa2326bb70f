"""Multi-turn TRL: each rollout is a WMRL episode whose `submit` tool is env.step, rewarded with its return."""

from __future__ import annotations

import os
import runpy
from pathlib import Path

import pytest

from wmrl_envs.integrations.trl_environment import SUBMIT_HINT, MLEDojoToolEnvironment, mledojo_environment_factory
from wmrl_envs.rewards import Score, WorldModel
from wmrl_envs.world_models import Prediction

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TASK = "telco-customer-churn"
PROGRAM = "```python\nimport pandas as pd\nprint('a submission')\n```"


class Fixed:
    """A world model that places every program at 0.4 (no sandbox runs: the test is about the episode)."""

    def predict(self, competition, code):
        return Prediction(position=0.4)


class Placed:
    """A world model that reads the position from the program (``# position 0.3``); None when it says none."""

    def predict(self, competition, code):
        words = code.split()
        return Prediction(position=float(words[-1])) if words[-2:-1] == ["position"] else None


class FailsOnce:
    """A reward source whose first call fails (a crashed scoring service), then scores every program 0.25."""

    name = "flaky"

    def __init__(self) -> None:
        self.calls = 0

    def score(self, batch):
        self.calls += 1
        if self.calls == 1:
            raise ConnectionError("the scoring service went away")
        return [Score(0.25, "flaky") for _ in batch]


def _tool_env(max_turns: int, source, pool_root: Path, **make) -> MLEDojoToolEnvironment:
    factory = mledojo_environment_factory(
        split="held-out", data_root=pool_root, max_turns=max_turns, reward_source=source, **make
    )
    environment = factory()
    environment.reset(task=TASK)
    return environment


def test_submit_steps_the_episode_and_the_reward_is_its_return(pool_root: Path) -> None:
    factory = mledojo_environment_factory(
        split="held-out", data_root=pool_root, max_turns=2, reward_source=WorldModel(Fixed())
    )
    environment = factory()
    assert environment.reset(task=TASK, prompt=[{"role": "user", "content": "..."}]) == SUBMIT_HINT
    first = environment.submit(PROGRAM)
    assert "Predicted position score: 0.400" in first and "Submissions left: 1." in first, first
    assert environment.get_reward() == pytest.approx(0.4)
    environment.submit("def broken(:")
    assert environment.get_reward() == pytest.approx(0.4), "the return is the best position, not a sum"
    assert "episode is over" in environment.submit(PROGRAM)
    environment.reset(task=TASK)
    assert environment.get_reward() == 0.0


def test_the_reward_is_the_best_turn_in_final_mode_too_even_when_the_model_stops_early(pool_root: Path) -> None:
    environment = _tool_env(3, WorldModel(Placed()), pool_root, reward_mode="final")
    environment.submit("x = 1  # position 0.3")
    environment.submit("x = 2  # position 0.2")
    assert environment.get_reward() == pytest.approx(0.3), "two of three submissions: the best so far, not 0"
    assert environment.env.unwrapped.episode.turn == 2


def test_a_turn_the_source_could_not_score_makes_the_reward_unknown(pool_root: Path) -> None:
    environment = _tool_env(2, WorldModel(Placed()), pool_root)
    assert environment.get_reward() == 0.0, "no submission yet: a real 0"
    environment.submit("x = 1  # position 0.3")
    feedback = environment.submit("x = 2  # no prediction")
    assert "could not be scored" in feedback
    assert environment.get_reward() is None, "the unscored turn may have been the best: TRL leaves it out"


def test_code_that_is_not_a_string_is_refused_without_using_a_submission(pool_root: Path) -> None:
    environment = _tool_env(2, WorldModel(Fixed()), pool_root)
    for code in (42, ["import pandas"], {"code": "x = 1"}):
        with pytest.raises(TypeError, match=f"whole program as one string, got {type(code).__name__}.*2 left"):
            environment.submit(code)
    assert environment.env.unwrapped.episode.turn == 0
    assert "Submissions left: 1." in environment.submit(PROGRAM)


def test_a_failing_reward_source_uses_no_submission(pool_root: Path) -> None:
    source = FailsOnce()
    environment = _tool_env(2, source, pool_root)
    with pytest.raises(ConnectionError, match="went away"):
        environment.submit(PROGRAM)
    assert environment.env.unwrapped.episode.turn == 0, "the failed call consumed no turn"
    feedback = environment.submit(PROGRAM)
    assert "# Result of submission 1/2" in feedback and "Submissions left: 1." in feedback, feedback
    assert source.calls == 2 and environment.get_reward() == pytest.approx(0.25)


def test_a_failed_reset_leaves_no_episode_to_submit_to(pool_root: Path) -> None:
    environment = _tool_env(2, WorldModel(Fixed()), pool_root)
    environment.submit(PROGRAM)
    with pytest.raises(KeyError, match="task 'no-such-task' is not in this environment"):
        environment.reset(task="no-such-task")
    assert environment.submit(PROGRAM) == "No episode is running: no submission was made."
    assert environment.get_reward() is None, "the previous rollout's return is not reported for this one"
    environment.reset(task=TASK)
    assert "Submissions left: 1." in environment.submit(PROGRAM)


def test_submit_is_the_only_tool_and_its_schema_reads_cleanly() -> None:
    import inspect

    from transformers.utils import get_json_schema

    tools = [
        name
        for name, _ in inspect.getmembers(MLEDojoToolEnvironment, predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]
    assert tools == ["submit"], "TRL makes every public method a tool"
    schema = get_json_schema(MLEDojoToolEnvironment.submit)["function"]
    assert schema["parameters"]["required"] == ["code"]
    assert schema["parameters"]["properties"]["code"]["type"] == "string"
    texts = [schema["description"], schema["parameters"]["properties"]["code"]["description"]]
    assert all("\n" not in text and "  " not in text for text in texts + [schema["return"]["description"]])


def test_anything_but_a_wmrl_code_env_is_refused() -> None:
    import gymnasium as gym

    with pytest.raises(TypeError, match="WMRL-MLEDojo-v0"):
        MLEDojoToolEnvironment(gym.make("CartPole-v1"))


@pytest.mark.slow
def test_grpo_trainer_runs_rollouts_in_wmrl_episodes(pool_root: Path, tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    trl = pytest.importorskip("trl")
    from test_trl_reward import tiny_chat_model, tiny_grpo_config
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl.chat_template_utils import qwen3_chat_template

    from wmrl_envs.integrations.trl import trl_dataset

    torch.set_num_threads(1)
    torch.manual_seed(0)
    path = tiny_chat_model(tmp_path / "model")
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


GOOD = (
    "import os\nimport pandas as pd\nt = pd.read_csv(os.environ['DATA_DIR'] + '/test.csv')\n"
    "t['churn'] = (t['contract'] == 'Month-to-month') + (t['internet_service'] == 'Fiber optic') - t['tenure'] / 72\n"
    "t[['customer_id', 'churn']].to_csv(os.environ['SUBMISSION_PATH'], index=False)\n"
)
WORSE = (
    "import os\nimport pandas as pd\nt = pd.read_csv(os.environ['DATA_DIR'] + '/test.csv')\n"
    "t['churn'] = -t['tenure']\nt[['customer_id', 'churn']].to_csv(os.environ['SUBMISSION_PATH'], index=False)\n"
)
DONE = "All my submissions are made."
OVER = "The episode is over: no submissions are left."


def _expected_auc(competition, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> float:
    """The ROC AUC of `code`'s predictions, run here in-process and scored by scikit-learn, apart from the env."""
    import pandas as pd
    from sklearn.metrics import roc_auc_score

    program, out = tmp_path / f"expected-{len(code)}.py", tmp_path / f"expected-{len(code)}.csv"
    program.write_text(code)
    monkeypatch.setenv("DATA_DIR", str(competition.public_dir))
    monkeypatch.setenv("SUBMISSION_PATH", str(out))
    runpy.run_path(str(program))
    both = pd.read_csv(competition.answers_path).merge(pd.read_csv(out), on="customer_id", suffixes=("", "_predicted"))
    return float(roc_auc_score(both["churn"], both["churn_predicted"]))


@pytest.mark.slow
def test_a_model_that_submits_through_trl_gets_its_best_turn_as_the_reward(
    pool_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    torch = pytest.importorskip("torch")
    trl = pytest.importorskip("trl")
    from test_trl_reward import tiny_grpo_config
    from tool_calling_model import ToolPolicy, tool_call, train_tool_calling_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from wmrl_envs.integrations.trl import trl_dataset
    from wmrl_envs.rewards import RealExecution
    from wmrl_envs.sandbox import Limits

    torch.set_num_threads(1)
    dataset, competitions = trl_dataset("held-out", data_root=pool_root, max_turns=2)
    dataset = dataset.filter(lambda row: row["task"] == TASK)
    make = mledojo_environment_factory(
        data_root=pool_root, split="held-out", max_turns=2, reward_source=RealExecution(limits=Limits(wall_time_s=120))
    )
    probe = make()
    prompt = dataset[0]["prompt"]
    prompt = prompt[:-1] + [{**prompt[-1], "content": prompt[-1]["content"] + probe.reset(**dataset[0])}]  # as TRL does
    policy = ToolPolicy(  # submit the better program, then a worse one, then once too many; then stop
        tool_call("submit", code=GOOD),
        (
            ("Submissions left: 1.", tool_call("submit", code=WORSE)),
            ("Submissions left: 0.", tool_call("submit", code=GOOD)),
            (OVER, DONE),
        ),
    )
    path = train_tool_calling_model(tmp_path / "model", prompt, [probe.submit], policy)
    seen: dict[str, list] = {}

    def recorded(prompts, completions, environments, **kwargs):
        seen["completions"], seen["rewards"] = completions, [e.get_reward() for e in environments]
        return [None] * len(completions)

    config = tiny_grpo_config(
        tmp_path / "out",
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=1024,
        max_steps=1,
        temperature=0.2,  # the tiny model's policy is sharp but not certain: sample near its mode
    )
    trainer = trl.GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(path),
        processing_class=AutoTokenizer.from_pretrained(path),
        args=config,
        reward_funcs=[recorded],
        train_dataset=dataset,
        environment_factory=make,
    )
    trainer.train()

    competition = competitions[TASK]
    expected = {code: _expected_auc(competition, code, tmp_path, monkeypatch) for code in (GOOD, WORSE)}
    assert len(seen["completions"]) == 2 and len(trainer.environments) == 2
    for completion, environment in zip(seen["completions"], trainer.environments, strict=True):
        calls = [m["tool_calls"][0]["function"] for m in completion if m.get("tool_calls")]
        answers = [m["content"] for m in completion if m["role"] == "tool"]
        assert [(c["name"], c["arguments"]["code"]) for c in calls] == [("submit", c) for c in (GOOD, WORSE, GOOD)]
        assert "Submissions left: 1." in answers[0] and "Submissions left: 0." in answers[1] and answers[2] == OVER
        assert completion[-1] == {"role": "assistant", "content": DONE}
        episode = environment.env.unwrapped.episode
        assert episode.turn == 2, "two submissions ran; the third was refused without running"
        for code, score, value in zip((GOOD, WORSE), episode.scores, episode.values, strict=True):
            outcome = score.outcome
            assert outcome is not None and outcome.execution.status.value == "ok", "a real run in the sandbox"
            assert outcome.grade.valid and outcome.grade.score == pytest.approx(expected[code], abs=1e-9)
            assert value == pytest.approx(outcome.grade.position.average)
        assert f"Score (roc_auc): {expected[GOOD]:.6g}" in answers[0], "the real grader's feedback"
    values = [environment.env.unwrapped.episode.values for environment in trainer.environments]
    assert all(v[0] > v[1] > 0 for v in values), "the second program is worse: best turn, sum and last all differ"
    assert seen["rewards"] == [max(v) for v in values], "the reward is the best turn"
    assert all(v[-1] < reward < sum(v) for reward, v in zip(seen["rewards"], values)), "not a sum, not the last"
    logged = [entry for entry in trainer.state.log_history if "rewards/MLEDojoToolEnvironment/mean" in entry]
    assert len(logged) == 1
    assert logged[0]["rewards/MLEDojoToolEnvironment/mean"] == pytest.approx(sum(max(v) for v in values) / 2)
    assert logged[0]["tools/call_frequency"] == pytest.approx(3.0)
