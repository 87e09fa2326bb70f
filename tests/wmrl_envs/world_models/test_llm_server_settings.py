"""An llm:URL#MODEL world model's settings file: what every request carries, and refusals that say what is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_helpers import ChatServer, ScriptedBackend, toy_competition

from wmrl_envs.errors import WmrlError
from wmrl_envs.world_models.llm_server_settings import LLMServerSettings, parse_llm_spec

SCHEMA = {"type": "json_schema", "json_schema": {"name": "prediction", "schema": {"type": "object"}}}
GOOD = '```json\n{"status": "valid", "position": 0.62, "metric": 1.4, "reason": "ridge"}\n```'


def test_sampling_reply_length_and_extra_body_reach_the_server(tmp_path: Path) -> None:
    settings = LLMServerSettings.from_mapping(
        {"temperature": 0.7, "max_reply_tokens": 96, "extra_body": {"top_p": 0.9, "response_format": SCHEMA}}
    )
    with ChatServer(ScriptedBackend([GOOD])) as server:
        world_model = settings.world_model(f"llm:{server.base_url}#tiny-qwen3")
        prediction = world_model.predict(toy_competition(tmp_path), "print(1)")
        [body] = server.posts("/v1/chat/completions")
    assert prediction.position == 0.62
    assert (body["temperature"], body["max_tokens"], body["top_p"]) == (0.7, 96, 0.9)
    assert body["response_format"] == SCHEMA and body["model"] == "tiny-qwen3"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"temprature": 0.5}, r"unknown LLM world-model setting\(s\) \['temprature'\]; known: \['temperature'"),
        ({"temperature": -1}, "temperature must be a number >= 0"),
        ({"max_reply_tokens": 0}, "max_reply_tokens must be an integer >= 1"),
        ({"extra_body": {"max_tokens": 5}}, "extra_body may not set \\['max_tokens'\\].*max_reply_tokens"),
        ({"extra_body": "top_p=0.9"}, "extra_body must be a mapping"),
    ],
)
def test_bad_settings_are_refused_with_what_is_allowed(data: dict, message: str) -> None:
    with pytest.raises(WmrlError, match=message):
        LLMServerSettings.from_mapping(data)


def test_a_spec_without_a_model_name_shows_the_form() -> None:
    assert parse_llm_spec("llm:http://h:8000/v1#org/model") == ("http://h:8000/v1", "org/model")
    with pytest.raises(ValueError, match="llm:URL#MODEL"):
        parse_llm_spec("llm:http://h:8000/v1")
