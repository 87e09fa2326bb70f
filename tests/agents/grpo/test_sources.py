"""Reward sources built from the config: each kind, the corrections' settings, and clear errors for bad specs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from wmrl_agents.grpo.config import ConfigError, GRPOConfig
from wmrl_agents.grpo.sources import build_predictor, build_reward_source

from wmrl_envs.rewards import Corrected, RealExecution, WorldModel
from wmrl_envs.vllm_engine import VLLMNotInstalled
from wmrl_envs.world_models import (
    CheapExecutionProxy,
    Completion,
    LLMWorldModel,
    SurrogateFileError,
    TransformersBackend,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "wmrl_envs" / "world_models"))
from llm_helpers import tiny_chat_model  # the shared tiny LM, found by path


def test_each_reward_kind_builds_its_source_with_the_configured_limits_and_corrections() -> None:
    config = GRPOConfig(time_limit_s=30, memory_mb=1024, workers=1)
    real = build_reward_source(config)
    assert isinstance(real, RealExecution) and real.limits.wall_time_s == 30 and real.workers == 1
    world_model = build_reward_source(config.replace(reward="world-model"))
    assert isinstance(world_model, WorldModel) and isinstance(world_model.predictor, CheapExecutionProxy)

    corrections = {"anchor_fraction": 0.2, "min_pairs": 8, "refit_every": 4, "max_weight": 3.0, "debias_map": "centred"}
    corrected = build_reward_source(config.replace(reward="corrected", corrections=corrections, seed=5))
    assert isinstance(corrected, Corrected)
    assert (corrected.debiaser.min_pairs, corrected.debiaser.refit_every) == (8, 4)
    assert corrected.debiaser.map_kind == "centred"
    assert corrected.weighter.max_weight == 3.0
    assert corrected.scheduler.fraction == 0.2 and corrected.scheduler.seed == 5
    assert corrected.fallback.config.healthy_anchor_fraction == 0.2  # the rule keeps the configured fraction


def test_world_model_specs_are_parsed_or_refused_with_the_accepted_forms(tmp_path: Path) -> None:
    config = GRPOConfig()
    llm = build_predictor("llm:http://127.0.0.1:9/v1#tiny-model", config)
    assert isinstance(llm, LLMWorldModel) and llm.backend.model == "tiny-model"
    with pytest.raises(ConfigError, match="names no model; write llm:URL#MODEL"):
        build_predictor("llm:http://127.0.0.1:9/v1", config)
    with pytest.raises(SurrogateFileError, match="does not exist"):
        build_predictor(f"surrogate:{tmp_path / 'missing.joblib'}", config)
    with pytest.raises(ConfigError, match="unknown world model 'oracle'; use 'proxy'"):
        build_predictor("oracle", config)


def test_an_in_process_llm_world_model_loads_a_model_folder_and_generates_with_it(tmp_path: Path) -> None:
    model_dir = tiny_chat_model(tmp_path / "tiny-lm")
    world_model = build_predictor(f"llm-local:{model_dir}", GRPOConfig())
    assert isinstance(world_model, LLMWorldModel) and isinstance(world_model.backend, TransformersBackend)
    (reply,) = world_model.backend.complete([[{"role": "user", "content": "Predict the position score."}]], 4)
    assert isinstance(reply, Completion) and 1 <= reply.completion_tokens <= 4 and reply.prompt_tokens > 0


def test_in_process_llm_specs_refuse_a_missing_folder_and_a_missing_vllm(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no model folder at .*absent; give the folder of a saved causal LM"):
        build_predictor(f"llm-local:{tmp_path / 'absent'}", GRPOConfig())
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed here: its engine would load")
    (tmp_path / "model").mkdir()
    with pytest.raises(VLLMNotInstalled, match="VLLMBackend"):
        build_predictor(f"llm-vllm:{tmp_path / 'model'}", GRPOConfig())
