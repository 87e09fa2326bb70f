"""``wmrl libero-compare``: three reward sources from one warm start, same seeds, costs counted, files written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from wmrl_agents.cli import main
from wmrl_agents.libero.compare import LiberoCompareSettings, run_libero_compare, settings_key

from wmrl_envs.errors import WmrlError


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


def _small(warm: Path, progress: Path, assets: Path, **changes: object) -> LiberoCompareSettings:
    """One WMRL run of one seed, two episodes a step, three-step episodes: the resume machinery at its cheapest."""
    fields: dict[str, Any] = {"seeds": (0,), "methods": ("wmrl",), "steps": 1, "group_size": 2, "horizon": 3}
    fields |= {"eval_init_states": (16,), "parallel_envs": 2, "assets_dir": str(assets)} | changes
    return LiberoCompareSettings(str(warm), str(progress), **fields)


def test_a_resumed_comparison_reads_back_finished_runs_and_extends_them_as_one_uninterrupted_run_would(
    libero_assets: Path, warm_start_and_progress: tuple[Path, Path], tmp_path: Path
) -> None:
    warm, progress = warm_start_and_progress
    one_step = _small(warm, progress, libero_assets)
    first = run_libero_compare(one_step, tmp_path / "runs")
    with pytest.raises(WmrlError, match=r"already holds runs of this comparison \(wmrl-seed0\).*--resume"):
        run_libero_compare(one_step, tmp_path / "runs")
    log = tmp_path / "runs" / "wmrl-seed0" / "steps.jsonl"
    written = log.stat().st_mtime_ns
    again = run_libero_compare(one_step, tmp_path / "runs", resume=True)
    assert again["methods"] == first["methods"] and again["initial"] == first["initial"]
    assert log.stat().st_mtime_ns == written, "a finished run is read back, not trained again"

    two_steps = _small(warm, progress, libero_assets, steps=2)
    extended = run_libero_compare(two_steps, tmp_path / "runs", resume=True)["methods"]["wmrl"]["runs"][0]
    straight = run_libero_compare(two_steps, tmp_path / "straight")["methods"]["wmrl"]["runs"][0]
    timeless = [{k: v for k, v in p.items() if k not in ("step_s", "simulation_s")} for p in straight["curve"]]
    assert [{k: v for k, v in p.items() if k not in ("step_s", "simulation_s")} for p in extended["curve"]] == timeless
    assert extended["held_out"]["successes"] == straight["held_out"]["successes"]
    assert extended["curve"][0] == first["methods"]["wmrl"]["runs"][0]["curve"][0]


def test_resuming_with_another_warm_start_or_a_damaged_result_says_what_differs_and_what_to_do(
    libero_assets: Path, warm_start_and_progress: tuple[Path, Path], tmp_path: Path
) -> None:
    from wmrl_agents.policies.vla.sft import save_policy_checkpoint
    from wmrl_agents.policies.vla.tiny import TinyVLAConfig, TinyVLAPolicy

    warm, progress = warm_start_and_progress
    run_libero_compare(_small(warm, progress, libero_assets), tmp_path / "runs")
    other = tmp_path / "other-sft"
    save_policy_checkpoint(TinyVLAPolicy(TinyVLAConfig(image_size=32, seed=4)), other, step=1, summary={})
    with pytest.raises(WmrlError, match=r"finished run of other settings \(differing: warm_start_sha256\)"):
        run_libero_compare(_small(other, progress, libero_assets), tmp_path / "runs", resume=True)
    (tmp_path / "runs" / "wmrl-seed0" / "result.json").write_text('{"settings": {"steps": 1')
    with pytest.raises(WmrlError, match=r"result.json is not a readable result .*delete it"):
        run_libero_compare(_small(warm, progress, libero_assets), tmp_path / "runs", resume=True)


def test_the_reuse_key_follows_the_warm_starts_content_not_its_path(
    warm_start_and_progress: tuple[Path, Path], tmp_path: Path
) -> None:
    import shutil

    warm, progress = warm_start_and_progress
    moved = tmp_path / "moved-sft"
    shutil.copytree(warm, moved)
    key = settings_key(LiberoCompareSettings(str(warm), str(progress), eval_k=8))
    assert settings_key(LiberoCompareSettings(str(moved), str(progress), eval_k=8)) == key
    assert settings_key(LiberoCompareSettings(str(moved), str(progress), eval_k=1)) != key
    next(p for p in moved.rglob("*") if p.is_file()).write_bytes(b"changed")
    assert settings_key(LiberoCompareSettings(str(moved), str(progress), eval_k=8)) != key
