"""``wmrl libero-compare``: three reward sources from one warm start, same seeds, costs counted, files written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from wmrl_agents.cli import main
from wmrl_agents.libero.compare import LiberoCompareSettings


@pytest.fixture
def warm_start_and_progress(tmp_path: Path) -> tuple[Path, Path]:
    """A tiny-vla checkpoint folder (as `wmrl sft` writes) and a progress model file."""
    from wmrl_agents.policies.vla.sft import save_policy_checkpoint
    from wmrl_agents.policies.vla.tiny import TinyVLAConfig, TinyVLAPolicy
    from wmrl_tasks.libero import ProgressModelConfig, TinyProgressModel

    warm = tmp_path / "sft"
    save_policy_checkpoint(TinyVLAPolicy(TinyVLAConfig(image_size=32, seed=3)), warm, step=1, summary={})
    progress = TinyProgressModel(ProgressModelConfig(frame_size=16)).save(tmp_path / "progress.pt")
    return warm, progress


def test_the_three_methods_start_alike_and_differ_only_in_what_their_reward_checks(
    libero_assets: Path, warm_start_and_progress: tuple[Path, Path], tmp_path: Path
) -> None:
    warm, progress = warm_start_and_progress
    args = ["libero-compare", "--warm-start", str(warm), "--progress-model", str(progress), "--tasks", "2"]
    args += ["--seeds", "0", "--steps", "1", "--groups", "2", "--group-size", "2", "--horizon", "3"]
    args += ["--eval-init-states", "16-17", "--parallel-envs", "2", "--workers", "2"]
    args += ["--assets-dir", str(libero_assets)]
    args += ["--run-dir", str(tmp_path / "runs"), "--out-dir", str(tmp_path / "boards"), "--name", "t"]
    assert main(args) == 0
    report = json.loads((tmp_path / "boards" / "libero-compare-t.json").read_text())
    assert (tmp_path / "boards" / "libero-compare-t.png").stat().st_size > 0
    runs = {method: entry["runs"][0] for method, entry in report["methods"].items()}
    assert set(runs) == {"real", "world_model", "wmrl"}
    # one warm start and one seed: the first step's episodes are the same in every method
    first = {method: run["curve"][0] for method, run in runs.items()}
    assert len({p["success_rate"] for p in first.values()}) == 1
    assert all(run["episodes"] == 4 and run["simulation_s"] > 0 for run in runs.values())
    assert all([p["step"] for p in run["curve"]] == [1] for run in runs.values())  # steps count from 1
    assert runs["real"]["success_checks"] == 4 and runs["world_model"]["success_checks"] == 0
    assert runs["wmrl"]["success_checks"] == 2  # one anchor group of two episodes
    assert report["initial"]["episodes"] == 2 and all(run["held_out"]["episodes"] == 2 for run in runs.values())
    assert [row["method"] for row in report["table"]] == ["warm start (SFT)", "real", "world_model", "wmrl"]


def test_held_out_states_that_grpo_trains_on_are_refused(warm_start_and_progress: tuple[Path, Path]) -> None:
    warm, progress = warm_start_and_progress
    with pytest.raises(ValueError, match="trained on"):
        LiberoCompareSettings(str(warm), str(progress), eval_init_states=(3, 20))
    with pytest.raises(FileNotFoundError, match="wmrl sft"):
        LiberoCompareSettings(str(warm / "missing"), str(progress))
