"""The training config: the paper's defaults, presets, files, and refusal of unknown keys and impossible values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from wmrl_agents.grpo.config import DEBIAS_MAPS, ConfigError, GRPOConfig, load_config, preset

from wmrl_envs.corrections.debias import MAP_KINDS


def test_defaults_are_the_papers_recipe() -> None:
    c = GRPOConfig()
    assert (c.groups_per_step, c.group_size, c.max_turns) == (8, 8, 4)
    assert (c.temperature, c.top_p, c.learning_rate) == (1.0, 1.0, 1e-6)
    assert (c.kl_coef, c.entropy_coef, c.clip_epsilon, c.ppo_epochs) == (0.04, 0.002, 0.2, 1)
    assert c.loss_type == "grpo" and c.time_limit_s == 1200.0
    assert c.corrections.anchor_fraction == 0.1 and c.corrections.min_pairs == 200
    assert preset("paper") == c


def test_presets_shrink_the_run_and_dr_grpo_only_centres_advantages() -> None:
    smoke, quick = preset("smoke"), preset("quick")
    assert smoke.steps * smoke.groups_per_step * smoke.group_size * smoke.max_turns <= 8
    assert quick.steps * quick.groups_per_step * quick.group_size < 200
    assert GRPOConfig(loss_type="dr_grpo").advantage_std_mode == "none"
    assert GRPOConfig().advantage_std_mode == "sample"
    assert GRPOConfig(loss_type="dr_grpo", advantage_std="sample").advantage_std_mode == "sample", "asked for: kept"
    with pytest.raises(ConfigError, match="advantage_std"):
        GRPOConfig(advantage_std="mad")
    with pytest.raises(ConfigError, match="unknown preset 'tiny'"):
        preset("tiny")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"lr": 0.1}, r"unknown config key\(s\) 'lr'"),
        ({"corrections": {"anchor_fractoin": 0.2}}, "'corrections.anchor_fractoin'"),
        ({"corrections": {"fallback": {"rank_windw": 3}}}, "'rank_windw' in corrections.fallback"),
        ({"steps": 0}, "steps must be an integer >= 1, got 0"),
        ({"group_size": 2.5}, "group_size must be an integer"),
        ({"seed": True}, "seed must be an integer"),
        ({"clip_epsilon": 1.0}, r"clip_epsilon must lie in \(0, 1\)"),
        ({"top_p": 0.0}, r"top_p must lie in \(0, 1\]"),
        ({"learning_rate": -1e-6}, "learning_rate must lie in"),
        ({"kl_coef": float("nan")}, "kl_coef must be a finite number"),
        ({"loss_type": "ppo"}, "loss_type must be one of 'grpo', 'dr_grpo'"),
        ({"reward": "oracle"}, "reward must be one of"),
        ({"corrections": {"anchor_fraction": 0.0}}, r"corrections.anchor_fraction must lie in \(0, 1\]"),
        ({"corrections": {"max_weight": 0.5}}, "corrections.max_weight must lie in"),
        ({"corrections": {"debias_map": "spline"}}, "corrections.debias_map must be one of 'steps', 'centred'"),
        ({"corrections": {"fallback": {"degraded_anchor_fraction": 0.05}}}, "corrections.fallback: .*not decrease"),
    ],
)
def test_bad_configs_are_refused_naming_the_key(changes: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        GRPOConfig.from_dict(changes)


def test_config_files_override_a_base_and_round_trip(tmp_path: Path) -> None:
    yaml_file = tmp_path / "run.yaml"
    yaml_file.write_text("steps: 5\nloss_type: dr_grpo\ncorrections:\n  anchor_fraction: 0.25\n", encoding="utf-8")
    c = load_config(yaml_file, base=preset("smoke"))
    assert (c.steps, c.loss_type, c.group_size) == (5, "dr_grpo", 2)  # group_size from the smoke base
    assert c.corrections.anchor_fraction == 0.25 and c.corrections.min_pairs == 2  # merged, not replaced
    assert c.corrections.fallback_config().healthy_anchor_fraction == 0.25
    json_file = tmp_path / "run.json"
    json_file.write_text(json.dumps(c.to_dict()), encoding="utf-8")
    assert load_config(json_file) == c
    changed = c.replace(corrections={"min_pairs": 9})
    assert (changed.corrections.min_pairs, changed.corrections.anchor_fraction) == (9, 0.25)  # the rest is kept


def test_bad_config_files_say_which_file_and_what_is_wrong(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("steps: [1, 2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="bad.yaml is not valid YAML"):
        load_config(bad)
    bad.write_text("- 1\n- 2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="must hold a mapping"):
        load_config(bad)
    bad.write_text("grup_size: 4\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad.yaml: unknown config key\(s\) 'grup_size'"):
        load_config(bad)
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.yaml")


def test_the_configs_debias_maps_are_the_debiasers() -> None:
    assert DEBIAS_MAPS == MAP_KINDS
    assert GRPOConfig().corrections.debias_map == "steps"  # the paper's map, until a comparison says otherwise
