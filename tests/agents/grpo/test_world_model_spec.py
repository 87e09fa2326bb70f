"""World-model specs: one parser, whose forms every message and the config's validation read."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from wmrl_agents.grpo.config import ConfigError, preset
from wmrl_agents.grpo.world_model_spec import KINDS, SPEC_FORMS, WorldModelSpec, WorldModelSpecError


@pytest.mark.parametrize(
    "spec, kind, target",
    [
        ("proxy", "proxy", ""),
        ("surrogate:/m/s.json", "surrogate", "/m/s.json"),
        ("llm:http://127.0.0.1:8000/v1#Qwen/Qwen3.5-9B", "llm", "http://127.0.0.1:8000/v1#Qwen/Qwen3.5-9B"),
        ("llm-local:/models/q", "llm-local", "/models/q"),
        ("tiny-progress:p.pt", "tiny-progress", "p.pt"),
    ],
)
def test_every_form_parses_and_prints_back(spec, kind, target) -> None:
    parsed = WorldModelSpec.parse(spec)
    assert (parsed.kind.name, parsed.target, str(parsed)) == (kind, target, spec)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("oracle", "unknown world model 'oracle'"),
        ("surrogate", "needs its MODEL_PATH"),
        ("proxy:x", "takes no target"),
        ("llm:http://h:1/v1", "names no model"),
        ("", "non-empty string"),
        (3, "non-empty string"),
    ],
)
def test_a_bad_spec_names_what_is_wrong_and_the_forms(spec, message) -> None:
    with pytest.raises(WorldModelSpecError, match=message):
        WorldModelSpec.parse(spec)


@given(st.text(max_size=30))
def test_parsing_anything_gives_a_spec_of_a_known_kind_or_a_clear_error(text) -> None:
    try:
        parsed = WorldModelSpec.parse(text)
    except WorldModelSpecError as err:
        assert "world model" in str(err)
    else:
        assert parsed.kind.name in KINDS


def test_the_config_refuses_a_typo_in_the_world_model_at_load_time() -> None:
    with pytest.raises(ConfigError, match="world_model: unknown world model 'surogate:x'"):
        preset("smoke").replace(world_model="surogate:x")


def test_a_spec_of_the_other_task_family_is_refused_with_the_forms_that_fit() -> None:
    with pytest.raises(WorldModelSpecError, match="predicts for libero tasks, not mledojo.*'proxy'"):
        WorldModelSpec.parse("tiny-progress:p.pt").require_family("mledojo")
    assert all(k.form in SPEC_FORMS for k in KINDS.values())
