"""``wmrl sft``: demonstrations in, a checkpoint out that the factory rebuilds; bad input refused clearly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from vla_test_data import SMALL, coloured_demo, write_libero_file
from wmrl_agents.cli import main
from wmrl_agents.policies.factory import load_policy_from_checkpoint
from wmrl_agents.policies.vla.tiny import TinyVLAPolicy


@pytest.fixture(autouse=True)
def _one_torch_thread() -> None:
    torch.set_num_threads(1)


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    rng = np.random.default_rng(0)
    return [
        write_libero_file(tmp_path / f"task{i}_demo.hdf5", [coloured_demo(rng, 8) for _ in range(2)]) for i in (0, 1)
    ]


def _err(capsys: pytest.CaptureFixture[str]) -> str:
    return " ".join(capsys.readouterr().err.split())


def test_sft_writes_a_checkpoint_that_loads_as_the_trained_policy(
    tmp_path: Path, files: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    options = tmp_path / "tiny.json"
    options.write_text(json.dumps(SMALL))
    out = tmp_path / "sft"
    argv = ["sft", "--policy", "tiny-vla", "--policy-options", str(options), "--demos", *map(str, files)]
    code = main(
        [*argv, "--max-demos", "1", "--epochs", "3", "--batch-size", "4", "--lr", "3e-3", "--out", str(out), "--json"]
    )
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["demonstrations"] == 2 and summary["steps"] == 16 and len(summary["losses"]) == 3
    assert summary["losses"][-1] < summary["nll_before"]
    assert json.loads((out / "sft.json").read_text()) == summary
    assert summary["checkpoint"] == str(out / "checkpoints" / "step-00000012")  # 3 epochs x 4 batches
    policy = load_policy_from_checkpoint(out)
    assert isinstance(policy, TinyVLAPolicy) and policy.config()["image_size"] == SMALL["image_size"]

    assert main([*argv, "--epochs", "1", "--out", str(out)]) == 2
    assert "already holds a checkpoint" in _err(capsys)

    assert main([*argv, "--epochs", "1", "--lr-schedule", "cosine", "--out", str(tmp_path / "cosine"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["config"]["lr_schedule"] == "cosine"


def test_sft_refuses_missing_files_and_non_vla_policies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sft", "--demos", str(tmp_path / "absent.hdf5"), "--out", str(tmp_path / "a")]) == 2
    assert "no demonstration file at" in _err(capsys)
    (tmp_path / "demo.hdf5").write_bytes(b"")
    assert (
        main(["sft", "--policy", "program", "--demos", str(tmp_path / "demo.hdf5"), "--out", str(tmp_path / "b")]) == 2
    )
    assert "wmrl sft trains VLA policies" in _err(capsys)
