"""MiniVLA: a run folder is checked before the heavy load, and every way it can be unusable is said clearly.

These tests write only the run folder's small files (config.json, dataset_statistics.json, an empty
checkpoints/*.pt) and check what happens before the model loads; loading weights is tested in vla/.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from wmrl_agents.policies.vla.minivla import MiniVLAPolicy
from wmrl_agents.policies.vla.minivla_checkpoint import (
    MiniVLACheckpointError,
    MiniVLAError,
    MiniVLAUnsupported,
    choose_unnorm_key,
    find_run,
)
from wmrl_agents.policies.vla.minivla_prompt import action_question, prompt_text

ACTION_STATS = {
    "q01": [-0.9, -0.9, -0.9, -0.1, -0.1, -0.1, 0.0],
    "q99": [0.9] * 6 + [1.0],
    "mask": [True] * 6 + [False],
}


def _run(
    root: Path, *, tokenizer: str = "extra_action_tokenizer", datasets: tuple[str, ...] = ("libero_90",), **vla
) -> Path:
    """A MiniVLA run folder's layout (the .pt is empty: nothing here loads weights)."""
    (root / "checkpoints").mkdir(parents=True)
    (root / "checkpoints" / "step-010000-epoch-01-loss=0.1.pt").write_bytes(b"")
    (root / "checkpoints" / "step-150000-epoch-09-loss=0.05.pt").write_bytes(b"")
    config = {"vla": {"base_vlm": "prism-qwen25-extra-dinosiglip-224px+0_5b", "action_tokenizer": tokenizer, **vla}}
    (root / "config.json").write_text(json.dumps(config))
    (root / "dataset_statistics.json").write_text(json.dumps({d: {"action": ACTION_STATS} for d in datasets}))
    return root


def test_a_run_folder_resolves_to_its_latest_checkpoint_with_config_and_statistics(tmp_path: Path) -> None:
    run = find_run(_run(tmp_path / "minivla"))
    assert run.checkpoint.name == "step-150000-epoch-09-loss=0.05.pt" and run.run_dir == tmp_path / "minivla"
    assert run.vla_config["action_tokenizer"] == "extra_action_tokenizer" and "libero_90" in run.statistics
    (tmp_path / "minivla" / "checkpoints" / "latest-checkpoint.pt").write_bytes(b"")
    assert find_run(tmp_path / "minivla").checkpoint.name == "latest-checkpoint.pt"
    assert (
        find_run(run.checkpoint).checkpoint == run.checkpoint
    )  # the .pt path itself, as openvla-mini's load_vla takes


def test_a_missing_or_incomplete_checkpoint_names_the_path_and_what_is_expected(tmp_path: Path) -> None:
    with pytest.raises(MiniVLACheckpointError, match=r"no MiniVLA checkpoint at .*nowhere: expected .*config.json"):
        find_run(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(MiniVLACheckpointError, match="empty holds no checkpoints/\\*.pt"):
        find_run(tmp_path / "empty")
    (tmp_path / "weights.pt").write_bytes(b"")
    with pytest.raises(MiniVLACheckpointError, match="weights.pt is not a Prismatic checkpoint file"):
        find_run(tmp_path / "weights.pt")
    run = _run(tmp_path / "run")
    (run / "dataset_statistics.json").unlink()
    with pytest.raises(MiniVLACheckpointError, match="dataset_statistics.json is missing"):
        find_run(run)
    (run / "dataset_statistics.json").write_text("{not json")
    with pytest.raises(MiniVLACheckpointError, match="dataset_statistics.json is unreadable"):
        find_run(run)
    (run / "config.json").write_text(json.dumps({"model": {"model_id": "prism-qwen25"}}))
    with pytest.raises(MiniVLACheckpointError, match="config.json has no 'vla' section"):
        find_run(run)


@pytest.mark.parametrize(
    ("vla", "message"),
    [
        ({"tokenizer": "libero_vq_extra_action_tokenizer"}, "VQ chunk checkpoints are not supported yet"),
        ({"tokenizer": "droid_fast_extra_action_tokenizer"}, "FAST action chunks"),
        ({"image_sequence_len": 2, "use_wrist_image": True}, "wrist-camera checkpoints are not supported yet"),
    ],
)
def test_checkpoints_of_unsupported_kinds_are_refused_before_loading(tmp_path: Path, vla: dict, message: str) -> None:
    with pytest.raises(MiniVLAUnsupported, match=message):
        MiniVLAPolicy.from_checkpoint(_run(tmp_path / "run", **vla))


def test_the_unnormalization_dataset_is_chosen_or_must_be_named() -> None:
    assert choose_unnorm_key({"libero_90": {}}, None) == "libero_90"
    assert choose_unnorm_key({"libero_10_no_noops": {}, "bridge": {}}, "libero_10") == "libero_10_no_noops"
    with pytest.raises(MiniVLAError, match="several datasets .*bridge, libero_90.*unnorm_key"):
        choose_unnorm_key({"libero_90": {}, "bridge": {}}, None)
    with pytest.raises(MiniVLAError, match="unnorm_key 'libero_goal' is not in"):
        choose_unnorm_key({"libero_90": {}}, "libero_goal")


def test_invalid_options_are_refused_before_anything_loads(tmp_path: Path) -> None:
    run = _run(tmp_path / "run")
    with pytest.raises(ValueError, match="lora_rank must be a positive int"):
        MiniVLAPolicy.from_checkpoint(run, lora_rank=0)
    with pytest.raises(ValueError, match="score_chunk"):
        MiniVLAPolicy.from_checkpoint(run, score_chunk=0)
    with pytest.raises(ValueError, match="unknown MiniVLAPolicy config keys \\['temperature'\\]"):
        MiniVLAPolicy.from_config({"checkpoint": str(run), "temperature": 1.0})
    with pytest.raises(ValueError, match="'checkpoint' path"):
        MiniVLAPolicy.from_config({"device": "cpu"})
    statistics = json.loads((run / "dataset_statistics.json").read_text())
    statistics["libero_90"]["action"]["q01"] = [0.0]
    (run / "dataset_statistics.json").write_text(json.dumps(statistics))
    with pytest.raises(MiniVLACheckpointError, match="dataset_statistics.json: .*7 values"):
        MiniVLAPolicy.from_checkpoint(run)


def test_the_prompt_is_openvlas_question_in_prismatics_qwen_chat_turn() -> None:
    assert action_question("Open the Top Drawer") == "What action should the robot take to open the top drawer?"
    assert prompt_text("Open the Top Drawer") == (
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\nWhat action should the robot take to open the top drawer?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
