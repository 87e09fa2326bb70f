"""HFPolicyConfig: validated once, round-trips through JSON, refuses unknown keys."""

from __future__ import annotations

import json

import pytest
from wmrl_agents.policies.hf_config import HFPolicyConfig, LoRASettings


def test_a_config_round_trips_through_json() -> None:
    config = HFPolicyConfig(
        max_new_tokens=64,
        lora=LoRASettings(rank=4, alpha=8, target_modules=("q_proj", "v_proj")),
        system_prompt="You are a Kaggle grandmaster.",
        chat_template_kwargs={"enable_thinking": False},
        dtype="bfloat16",
    )
    again = HFPolicyConfig.from_dict(json.loads(json.dumps(config.to_dict())))
    assert again == config
    assert again.lora.target_modules == ("q_proj", "v_proj")


def test_defaults_follow_the_paper_budgets() -> None:
    config = HFPolicyConfig()
    assert (config.max_prompt_tokens, config.lora, config.trust_remote_code) == (12288, None, False)


def test_an_unknown_key_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown HFPolicyConfig option\(s\) \['max_tokens'\].*max_new_tokens"):
        HFPolicyConfig.from_dict({"max_tokens": 10})
    with pytest.raises(ValueError, match=r"unknown lora option\(s\) \['r'\]"):
        HFPolicyConfig.from_dict({"lora": {"r": 8}})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_new_tokens": 0}, "max_new_tokens must be an integer >= 1"),
        ({"max_prompt_tokens": 12.5}, "max_prompt_tokens must be an integer >= 1"),
        ({"score_batch_size": True}, "score_batch_size must be an integer >= 1"),
        ({"dtype": "fp8"}, "dtype must be one of"),
        ({"device": ""}, "device must be 'auto'"),
        ({"lora": {"rank": 0}}, "lora.rank must be an integer >= 1"),
        ({"lora": {"dropout": 1.0}}, r"lora.dropout must be in \[0, 1\)"),
        ({"lora": {"alpha": float("nan")}}, "lora.alpha must be a number > 0"),
        ({"lora": {"target_modules": []}}, "lora.target_modules must be"),
        ({"gradient_checkpointing": "yes"}, "gradient_checkpointing must be true or false"),
    ],
)
def test_an_impossible_value_is_refused_with_its_name(options: dict, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        HFPolicyConfig.from_dict(options)
