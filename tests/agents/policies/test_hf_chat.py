"""The chat prompt: roles in the order a chat model expects, and truncation that keeps what matters."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wmrl_agents.policies.hf_chat import ChatPrompter, conversation
from wmrl_agents.policy import Episode, Sample, Turn

TASK_HEAD = "# Competition: telco churn\nPredict Churn for each customerID."


@pytest.fixture(scope="module")
def tokenizer(tiny_qwen35: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_qwen35)


def _episode(n_turns: int, task_words: int = 40, feedback_words: int = 30) -> Episode:
    turns = [
        Turn(
            Sample(text=f"REPLY-{k}\n```python\nprint({k})\n```", code=None, tokens=None, old_logprobs=torch.zeros(1)),
            feedback=f"FEEDBACK-{k} " + "the run ended with a traceback " * feedback_words,
        )
        for k in range(n_turns)
    ]
    prompt = TASK_HEAD + "\n" + " ".join(f"detail{i}" for i in range(task_words))
    return Episode(competition=None, prompt=prompt, turns=turns)  # type: ignore[arg-type]


def test_the_conversation_is_task_then_reply_and_feedback_pairs() -> None:
    messages = conversation(_episode(2), system_prompt="Be concise.")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert messages[1]["content"].startswith(TASK_HEAD)
    assert messages[2]["content"].startswith("REPLY-0") and messages[5]["content"].startswith("FEEDBACK-1")


def test_the_prompt_ends_where_the_assistant_writes(tokenizer) -> None:
    ids = ChatPrompter(tokenizer, 4096).prompt_ids(_episode(1))
    text = tokenizer.decode(ids)
    assert text.startswith("<|im_start|>user\n" + TASK_HEAD)
    assert text.endswith("<|im_start|>assistant\n")
    assert "FEEDBACK-0" in text and "omitted" not in text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    n_turns=st.integers(0, 4),
    task_words=st.integers(5, 400),
    feedback_words=st.integers(1, 60),
    budget=st.integers(120, 3000),
)
def test_truncation_fits_the_budget_drops_oldest_turns_first_and_keeps_the_task_head(
    tokenizer, n_turns: int, task_words: int, feedback_words: int, budget: int
) -> None:
    episode = _episode(n_turns, task_words, feedback_words)
    text = tokenizer.decode(ChatPrompter(tokenizer, budget).prompt_ids(episode))
    assert len(tokenizer(text, add_special_tokens=False)["input_ids"]) <= budget
    assert TASK_HEAD[:20] in text, "the head of the task prompt is never cut"
    kept = sorted(int(k) for k in re.findall(r"FEEDBACK-(\d+)", text))
    assert kept == list(range(n_turns - len(kept), n_turns)), "only the oldest turns are dropped"
    dropped = n_turns - len(kept)
    assert (f"{dropped} earlier submission(s)" in text) == (dropped > 0)
    if kept:
        assert episode.prompt in text, "the task prompt is cut only once every earlier turn is gone"


def test_a_task_prompt_longer_than_the_budget_keeps_its_head(tokenizer) -> None:
    episode = _episode(2, task_words=3000)
    text = tokenizer.decode(ChatPrompter(tokenizer, 300).prompt_ids(episode))
    assert text.startswith("<|im_start|>user\n" + TASK_HEAD)
    assert "was cut to fit the context window" in text and "2 earlier submission(s)" in text
    assert "detail2999" not in text


def test_a_budget_too_small_for_the_template_is_refused(tokenizer) -> None:
    with pytest.raises(ValueError, match="max_prompt_tokens=20 leaves no room"):
        ChatPrompter(tokenizer, 20, system_prompt="You write solutions for tabular competitions.")
