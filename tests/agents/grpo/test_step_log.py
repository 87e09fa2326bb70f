"""The step log survives a kill: a half-written line is skipped, and resuming cuts it back to the checkpoint."""

from __future__ import annotations

from pathlib import Path

from wmrl_agents.grpo.step_log import StepLog, format_step


def test_truncating_to_a_step_drops_later_records_and_a_line_cut_by_a_kill(tmp_path: Path) -> None:
    log = StepLog(tmp_path / "steps.jsonl")
    for step in (1, 2, 3):
        log.append({"step": step, "rewards": {"reward_mean": step / 10}})
    with log.path.open("a", encoding="utf-8") as fh:
        fh.write('{"step": 4, "rewa')  # the process died mid-line
    assert [r["step"] for r in log.read()] == [1, 2, 3]
    log.truncate(2)
    assert [r["step"] for r in log.read()] == [1, 2]
    assert log.path.read_text(encoding="utf-8").count("\n") == 2


def test_the_step_line_shows_rewards_by_source_corrections_and_loss_terms() -> None:
    record = {
        "step": 3,
        "rewards": {"reward_mean": 0.5, "real_mean": 0.4, "world_model_mean": 0.6, "excluded": 2},
        "corrections": {
            "anchor_weight": 1.7,
            "residual_variance": 0.7,
            "n_pairs": 24,
            "calibrated": True,
            "fallback_state": "healthy",
        },
        "update": {"loss": -0.1, "kl": 0.002, "entropy": 1.2, "clip_fraction": 0.0},
        "compute": {"step": {"step_s": 4.25}},
    }
    line = format_step(record, 10)
    for part in (
        "step 3/10",
        "real 0.400",
        "wm 0.600",
        "anchor w 1.70 s2 0.700 pairs 24 calibrated healthy",
        "kl 0.002",
        "excluded 2",
    ):
        assert part in line
