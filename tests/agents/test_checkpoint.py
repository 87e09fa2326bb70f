"""Checkpoints: exact round trips, atomic writes, and clear refusals of corrupt, truncated or foreign ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from wmrl_agents.checkpoint import CheckpointError, latest_checkpoint, load_checkpoint, save_checkpoint
from wmrl_agents.policies.factory import load_policy_from_checkpoint


def _save(root: Path, step: int = 3, keep: int = 2) -> Path:
    return save_checkpoint(
        root,
        step,
        state={"config": {"seed": 1}, "rng": {"trainer": {"state": 2**100}}, "policy": None, "policy_name": "choice"},
        policy_state={"logits": torch.tensor([0.5, -1.0, 2.0])},
        optimizer_state={"state": {0: {"exp_avg": torch.ones(3)}}, "param_groups": [{"lr": 0.1, "params": [0]}]},
        torch_rng={"cpu": torch.get_rng_state()},
        keep=keep,
    )


def test_a_checkpoint_round_trips_every_part_exactly(tmp_path: Path) -> None:
    path = _save(tmp_path)
    assert path.name == "step-00000003" and latest_checkpoint(tmp_path) == path
    checkpoint = load_checkpoint(path)
    assert checkpoint.step == 3
    assert checkpoint.state["rng"]["trainer"]["state"] == 2**100  # big integers survive JSON
    assert torch.equal(checkpoint.policy_state["logits"], torch.tensor([0.5, -1.0, 2.0]))
    assert torch.equal(checkpoint.optimizer_state["state"][0]["exp_avg"], torch.ones(3))
    assert torch.equal(checkpoint.torch_rng["cpu"], torch.get_rng_state())


def test_a_flipped_byte_is_refused_naming_the_file_and_what_to_do(tmp_path: Path) -> None:
    path = _save(tmp_path)
    weights = path / "policy.pt"
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"policy.pt does not match its SHA-256.*delete .*step-00000003"):
        load_checkpoint(path)


def test_a_truncated_or_incomplete_checkpoint_is_refused(tmp_path: Path) -> None:
    path = _save(tmp_path)
    state = path / "state.json"
    state.write_bytes(state.read_bytes()[:10])
    with pytest.raises(CheckpointError, match=r"state.json has 10 bytes, the manifest says \d+ \(truncated\?\)"):
        load_checkpoint(path)
    (path / "manifest.json").unlink()
    with pytest.raises(CheckpointError, match="has no manifest.json"):
        load_checkpoint(path)


def test_a_checkpoint_of_another_format_is_refused(tmp_path: Path) -> None:
    path = _save(tmp_path)
    manifest = json.loads((path / "manifest.json").read_text())
    (path / "manifest.json").write_text(json.dumps({**manifest, "format": "someone-else/7"}))
    with pytest.raises(CheckpointError, match="has format 'someone-else/7'"):
        load_checkpoint(path)


def test_interrupted_writes_are_ignored_and_old_checkpoints_pruned(tmp_path: Path) -> None:
    for step in (1, 2, 3):
        _save(tmp_path, step, keep=2)
    (tmp_path / ".tmp-step-00000004-abc").mkdir()  # what a kill mid-write leaves behind
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == [
        "step-00000002",
        "step-00000003",
    ]
    assert latest_checkpoint(tmp_path).name == "step-00000003"
    again = _save(tmp_path, 3)  # re-writing a step replaces it whole
    assert load_checkpoint(again).step == 3


def test_a_policy_the_factory_cannot_rebuild_is_explained(tmp_path: Path) -> None:
    _save(tmp_path / "checkpoints")
    with pytest.raises(CheckpointError, match="policy 'choice'.*cannot rebuild"):
        load_policy_from_checkpoint(tmp_path)  # a run folder: its latest checkpoint is used
