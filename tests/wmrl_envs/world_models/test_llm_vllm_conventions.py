"""The LLM world model's vLLM paths: the in-process engine without vLLM, and `vllm serve`'s reply conventions."""

from __future__ import annotations

import importlib.util

import pytest
from llm_helpers import ChatServer, ScriptedBackend, toy_competition

from wmrl_envs.vllm_engine import VLLMNotInstalled
from wmrl_envs.world_models import LLMWorldModel, OpenAICompatibleBackend, PredictorError
from wmrl_envs.world_models.llm_backends import VLLMBackend, _completion

GOOD = '{"status": "valid", "position": 0.4, "metric": 2.0, "reason": "ok"}'


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed here")
def test_the_in_process_engine_without_vllm_says_how_to_get_it_and_what_to_use_instead() -> None:
    with pytest.raises(VLLMNotInstalled, match=r"VLLMBackend needs the vllm package.*CUDA GPUs.*vllm serve"):
        VLLMBackend("Qwen/Qwen3.5-9B")


def test_a_reply_that_is_all_reasoning_says_to_disable_thinking() -> None:
    reply = {"choices": [{"message": {"content": None, "reasoning_content": "Let me think about the leaderboard"}}]}
    error = _completion(reply, 1.0, "http://gpu0:8000/v1/chat/completions")
    assert isinstance(error, PredictorError)
    assert "only reasoning" in str(error) and "enable_thinking" in str(error)


def test_the_base_url_may_omit_v1_and_the_model_is_the_served_name(tmp_path) -> None:
    with ChatServer(ScriptedBackend([GOOD]), model_name="Qwen/Qwen3.5-9B") as server:
        backend = OpenAICompatibleBackend(server.base_url.removesuffix("/v1"), "Qwen/Qwen3.5-9B")
        prediction = LLMWorldModel(backend).predict(toy_competition(tmp_path), "print(1)")
        [body] = server.posts("/v1/chat/completions")
    assert prediction.position == 0.4 and body["model"] == "Qwen/Qwen3.5-9B"
