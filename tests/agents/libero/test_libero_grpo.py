"""GRPO of the CPU VLA on real LIBERO episodes: groups share a start, rewards come from the configured source."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from wmrl_agents.grpo.config import ConfigError, preset
from wmrl_agents.grpo.task_families import task_family
from wmrl_agents.grpo.trainer import GRPOTrainer
from wmrl_agents.libero.episodes import EpisodeStart, make_envs, run_episodes
from wmrl_agents.libero.rollouts import LiberoRollouts
from wmrl_agents.libero.sources import build_libero_source, build_progress_model
from wmrl_agents.policies.program import ProgramPolicy
from wmrl_agents.policies.vla.tiny import TinyVLAConfig, TinyVLAPolicy

from wmrl_envs.rewards import Corrected


def _config(assets: Path, **changes):
    return preset("libero-smoke").replace(libero={"assets_dir": str(assets)}, **changes)


@pytest.fixture(scope="module")
def progress_model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from wmrl_tasks.libero import ProgressModelConfig, TinyProgressModel

    path = tmp_path_factory.mktemp("progress") / "progress.pt"
    TinyProgressModel(ProgressModelConfig(frame_size=32)).save(path)
    return path


def test_a_group_starts_every_episode_from_the_same_scene_and_differs_only_by_its_actions(libero_assets) -> None:
    policy = TinyVLAPolicy(TinyVLAConfig(image_size=32))
    envs = make_envs(
        2,
        suite="libero_spatial",
        task_id=0,
        image_size=32,
        cameras=["image"],
        init_states="train",
        horizon=3,
        assets_dir=str(libero_assets),
    )
    try:
        starts = [EpisodeStart(init_state=5, seed=11)] * 2
        episodes = run_episodes(policy, envs, starts, temperature=1.0, generator=torch.Generator().manual_seed(0))
    finally:
        for env in envs:
            env.close()
    first, second = episodes
    np.testing.assert_array_equal(first.rollout.frames[0], second.rollout.frames[0])
    assert first.rollout.init_state == second.rollout.init_state == 5
    assert first.rollout.steps == second.rollout.steps == 3 and len(first.choices) == 3
    assert not np.array_equal(np.stack([c.tokens for c in first.choices]), np.stack([c.tokens for c in second.choices]))


def test_one_corrected_grpo_step_scores_episodes_by_success_and_progress_and_moves_the_policy(
    libero_assets, progress_model_file, tmp_path
) -> None:
    config = _config(libero_assets, steps=1, reward="corrected", world_model=f"tiny-progress:{progress_model_file}")
    source = build_libero_source(config)
    assert isinstance(source, Corrected)
    policy = TinyVLAPolicy(TinyVLAConfig(image_size=32))
    before = [p.detach().clone() for p in policy.trainable_parameters()]
    trainer = GRPOTrainer(policy, config, tmp_path / "run", reward_source=source)
    try:
        record = trainer.train_step()
    finally:
        trainer.collector.close()
    assert [g["task"].split("@")[0] for g in record["groups"]] == ["libero_spatial/0"] * 2
    assert {g["source"] for g in record["groups"]} <= {"anchor", "world_model"}
    assert "anchor" in {g["source"] for g in record["groups"]}
    rewards = record["rewards"]
    assert rewards["trajectories"] == 4 and rewards["mean_steps"] == 4
    assert rewards["success_rate"] is not None and rewards["real_scored"] >= 2
    assert rewards["world_model_scored"] >= 2
    assert 0 < rewards["simulation_s"] < record["compute"]["step"]["step_s"]
    assert record["corrections"]["step"] == 0
    anchor_rewards = [r for g in record["groups"] if g["source"] == "anchor" for r in g["rewards"]]
    assert set(anchor_rewards) <= {0.0, 1.0}
    moved = any(not torch.equal(b, p) for b, p in zip(before, policy.trainable_parameters(), strict=True))
    wm_rewards = [r for g in record["groups"] if g["source"] == "world_model" for r in g["rewards"]]
    if len(set(wm_rewards)) > 1 or len(set(anchor_rewards)) > 1:
        assert moved, "a group with distinct rewards has non-zero advantages, so the update must move the weights"
    log = [json.loads(line) for line in (tmp_path / "run" / "steps.jsonl").read_text().splitlines()]
    assert log[0]["rewards"] == rewards


def test_a_checkpointed_libero_run_rebuilds_its_vla_and_refuses_other_tasks(libero_assets, tmp_path) -> None:
    from wmrl_agents.checkpoint import CheckpointError
    from wmrl_agents.policies.factory import load_policy_from_checkpoint

    config = _config(libero_assets, steps=1)
    policy = TinyVLAPolicy(TinyVLAConfig(image_size=32))
    trainer = GRPOTrainer(policy, config, tmp_path / "run")
    try:
        trainer.train(show=False)
    finally:
        trainer.collector.close()
    rebuilt = load_policy_from_checkpoint(tmp_path / "run")
    assert isinstance(rebuilt, TinyVLAPolicy)
    for a, b in zip(rebuilt.trainable_parameters(), policy.trainable_parameters(), strict=True):
        assert torch.equal(a, b)
    other = GRPOTrainer(
        TinyVLAPolicy(TinyVLAConfig(image_size=32)), config.replace(libero={"task_ids": [1]}), tmp_path / "run"
    )
    with pytest.raises(CheckpointError, match="another config|trained on"):
        other.resume()


def test_libero_rollouts_refuse_a_code_policy_and_multi_turn_episodes(libero_assets, tmp_path) -> None:
    with pytest.raises(ValueError, match="max_turns to 1"):
        LiberoRollouts.from_config(_config(libero_assets, max_turns=2))
    collector = LiberoRollouts.from_config(_config(libero_assets))
    with pytest.raises(TypeError, match="VLA policy.*tiny-vla"):
        collector.collect(
            ProgramPolicy(seed=0), build_libero_source(_config(libero_assets)), np.random.default_rng(0), 0
        )


def test_a_code_world_model_spec_is_refused_for_libero_with_the_forms_it_takes(libero_assets) -> None:
    with pytest.raises(ConfigError, match="tiny-progress:PATH.*progress-http:URL"):
        build_libero_source(_config(libero_assets, reward="corrected", world_model="proxy"))
    with pytest.raises(ConfigError, match="libero.suite"):
        preset("libero-smoke").replace(libero={"suite": "libero_100"})
    assert build_progress_model("progress-http:http://127.0.0.1:9/progress").url.endswith("/progress")


def test_the_libero_source_refuses_an_execution_log_or_sandbox_and_wmrl_train_passes_neither(
    libero_assets, tmp_path
) -> None:
    from wmrl_envs.execution_log import ExecutionLog
    from wmrl_envs.sandbox import make_executor

    config = _config(libero_assets)
    assert not task_family("libero").runs_in_sandbox, "so wmrl train builds no executor for it"
    assert build_libero_source(config).name == "real"
    with pytest.raises(ValueError, match="does not apply"):
        build_libero_source(config, executor=config.executor)
    with pytest.raises(ValueError, match="does not apply"):
        build_libero_source(config, log=ExecutionLog(tmp_path / "log.jsonl"))
    with pytest.raises(ValueError, match="does not apply"):
        build_libero_source(config, executor=make_executor("local"))
