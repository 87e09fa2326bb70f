"""Gymnasium's async vector envs hand back the same text observations as sync ones, with their defaults."""

from __future__ import annotations

import copy

import gymnasium as gym
import pytest
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory
from hypothesis import given
from hypothesis import strategies as st

import wmrl_envs  # noqa: F401  (registers the environments)
from wmrl_envs.spaces import UnicodeText


@given(st.lists(st.text(max_size=40), min_size=1, max_size=4))
def test_any_unicode_string_survives_shared_memory(texts: list[str]) -> None:
    space = UnicodeText(max_length=40)
    memory = create_shared_memory(space, n=len(texts))
    for index, text in enumerate(texts):
        write_to_shared_memory(space, index, text, memory)
    assert copy.deepcopy(read_from_shared_memory(space, memory, n=len(texts))) == tuple(texts)


def test_the_shared_view_reads_what_was_written_after_it_was_made() -> None:
    space = UnicodeText(max_length=10)
    memory = create_shared_memory(space, n=2)
    view = read_from_shared_memory(space, memory, n=2)  # AsyncVectorEnv makes its view once, before any step
    write_to_shared_memory(space, 1, "après", memory)
    assert copy.deepcopy(view) == ("", "après")


def test_a_string_too_long_for_the_space_is_refused_not_truncated() -> None:
    space = UnicodeText(max_length=3)
    with pytest.raises(ValueError, match="at most 3 characters"):
        write_to_shared_memory(space, 0, "abcd", create_shared_memory(space, n=1))


def test_async_mledojo_observations_equal_sync_observations(pool_root) -> None:
    kwargs = {"split": "train", "data_root": pool_root, "max_turns": 2}
    unparsable = ("```python\ndef broken(:\n```", "Größe ✓ is not code (")
    results = {}
    for mode in ("sync", "async"):
        envs = gym.make_vec("WMRL-MLEDojo-v0", num_envs=2, vectorization_mode=mode, **kwargs)
        try:
            prompts, infos = envs.reset(seed=3)
            feedback, *_ = envs.step(unparsable)
        finally:
            envs.close()
        results[mode] = (prompts, list(infos["task"]), feedback)
    assert results["async"] == results["sync"]
    prompts, _, feedback = results["async"]
    assert all("SUBMISSION_PATH" in prompt for prompt in prompts)
    assert all("not run" in text.lower() or "syntax" in text.lower() for text in feedback), feedback
