"""``wmrl train --preset libero-smoke``: the CPU VLA trained by WMRL on real LIBERO episodes from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from wmrl_agents.cli import main


def test_wmrl_train_runs_corrected_grpo_on_libero_and_resumes_only_with_the_same_tasks(
    libero_assets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from wmrl_tasks.libero import ProgressModelConfig, TinyProgressModel

    progress = TinyProgressModel(ProgressModelConfig(frame_size=16)).save(tmp_path / "progress.pt")
    config = tmp_path / "libero.yaml"
    config.write_text(f"libero:\n  assets_dir: {libero_assets}\n  horizon: 3\n", encoding="utf-8")
    out = tmp_path / "run"
    args = ["train", "--preset", "libero-smoke", "--config", str(config), "--steps", "1", "--out", str(out)]
    args += ["--reward", "corrected", "--world-model", f"tiny-progress:{progress}", "--json"]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["policy"] == "tiny-vla" and summary["steps"] == 1 and summary["reward_source"] == "corrected"
    (record,) = [json.loads(line) for line in (out / "steps.jsonl").read_text().splitlines()]
    assert record["rewards"]["mean_steps"] == 3 and record["tasks"][0].startswith("libero_spatial/0@")
    assert json.loads((out / "config.json").read_text())["libero"]["horizon"] == 3

    config.write_text(f"libero:\n  assets_dir: {libero_assets}\n  horizon: 3\n  task_ids: [1]\n", encoding="utf-8")
    assert main([*args[:-1], "--steps", "2", "--resume"]) != 0
    assert "another config" in " ".join(capsys.readouterr().err.split())
