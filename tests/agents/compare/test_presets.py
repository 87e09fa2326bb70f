"""Every preset that trains is sized so the corrections act: a debiasing map within the first third of the run."""

from __future__ import annotations

import pytest
from wmrl_agents.compare.presets import PRESETS as COMPARE_PRESETS
from wmrl_agents.compare.presets import compare_preset
from wmrl_agents.compare.run import corrections_curve
from wmrl_agents.grpo.config import PRESETS, GRPOConfig, preset

from wmrl_envs.corrections import AnchorScheduler


def _first_map_step(config: GRPOConfig) -> int | None:
    """The step whose anchors bring the pairs to min_pairs (every anchor rollout scored at every turn)."""
    c = config.corrections
    scheduler = AnchorScheduler(fraction=c.anchor_fraction, seed=config.seed)
    pairs = 0
    for step in range(config.steps):
        pairs += len(scheduler.choose(config.groups_per_step, step)) * config.group_size * config.max_turns
        if pairs >= c.min_pairs:
            return step
    return None


CONFIGS = {f"train:{name}": preset(name) for name in PRESETS if name != "libero-smoke"} | {
    f"compare:{name}": compare_preset(name).train for name in COMPARE_PRESETS
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_the_first_map_exists_within_the_first_third_of_the_run(name: str) -> None:
    config = CONFIGS[name]
    step = _first_map_step(config)
    assert step is not None and step < max(1, config.steps / 3), f"{name}: first map at step {step}"


def test_the_paper_preset_keeps_the_papers_cadence() -> None:
    corrections = preset("paper").corrections
    assert (corrections.min_pairs, corrections.refit_every, corrections.anchor_fraction) == (200, 64, 0.1)


def test_the_compare_curve_carries_the_corrections_per_step() -> None:
    record = {
        "step": 2,
        "rewards": {"reward_mean": 0.4, "groups_with_spread": 3},
        "groups": [{}, {}, {}, {}],
        "compute": {"total": {"real_execution_s": 12.0, "real_runs": 8}},
        "update": {"grad_norm": 0.5},
        "corrections": {
            "n_pairs": 8,
            "step_anchor_pairs": 4,
            "calibrated": True,
            "residual_variance": 0.31,
            "anchor_weight": 1.31,
            "world_model_weight": 1.0,
            "anchor_fraction": 0.25,
            "realized_anchor_fraction": 0.25,
            "fallback_state": "healthy",
            "failing": [],
        },
    }
    (point,) = corrections_curve([record])
    assert (
        point["real_runs"] == 8
        and point["anchor_pairs"] == 8
        and point["calibrated"] is True
        and point["residual_variance"] == 0.31
    )
    assert point["anchor_weight"] == 1.31 and point["realized_anchor_fraction"] == 0.25
    assert point["fallback_state"] == "healthy" and point["groups_with_spread"] == 3 and point["groups"] == 4
    (plain,) = corrections_curve([{**record, "corrections": None}])
    assert plain["anchor_weight"] is None and plain["anchor_pairs"] is None


def test_published_presets_run_five_seeds_unless_told_and_smoke_one() -> None:
    assert {name: compare_preset(name).seeds for name in ("smoke", "quick", "full")} == {
        "smoke": 1,
        "quick": 5,
        "full": 5,
    }
