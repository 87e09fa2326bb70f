"""Builders for the VLA policy tests: small policy settings, observations, and LIBERO-layout demonstration files.

The files are written the way LIBERO's ``scripts/create_dataset.py`` writes them (``data.attrs["problem_info"]``
JSON, ``data/demo_<i>/actions``, ``obs/agentview_rgb`` as robosuite renders it: upside down, ``obs/ee_pos``, ...),
so the reader is tested against the layout, not against itself. The demonstrations are learnable: the action is a
function of the image's colour, so a policy that reads pixels can fit them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from wmrl_agents.policies.vla.base import ActionTokenizer

SMALL = {
    "image_size": 16,
    "channels": [4, 8, 8],
    "state_hidden": 8,
    "text_buckets": 64,
    "text_dim": 8,
    "hidden": 32,
    "score_chunk": 5,
}
"""TinyVLAPolicy settings small enough for fast CPU tests."""

INSTRUCTION = "put the bowl on the plate"
COLOURS = np.array([[220, 30, 30], [30, 220, 30], [30, 30, 220]], dtype=np.uint8)
_TOKENIZER = ActionTokenizer()
ACTIONS = _TOKENIZER.decode(
    np.array([[40, 200, 128, 90, 170, 60, 0], [210, 50, 128, 160, 80, 190, 255], [128, 128, 20, 128, 128, 128, 255]])
)
"""One action per colour class, each exactly a bin centre (so its tokens are unambiguous)."""


def observation(rng: np.random.Generator, size: int = 32, wrist: bool = True, instruction: str = INSTRUCTION) -> dict:
    """A WMRL-LIBERO-v0 observation with random pixels."""
    obs = {"image": rng.integers(0, 256, (size, size, 3), dtype=np.uint8)}
    if wrist:
        obs["wrist_image"] = rng.integers(0, 256, (size, size, 3), dtype=np.uint8)
    obs["state"] = rng.normal(size=8).astype(np.float32)
    obs["instruction"] = instruction
    return obs


def coloured_demo(rng: np.random.Generator, steps: int, size: int = 16) -> dict[str, np.ndarray]:
    """Upright images whose colour class decides the action, with states and actions (a learnable demonstration)."""
    classes = rng.integers(0, len(COLOURS), steps)
    images = np.clip(COLOURS[classes][:, None, None, :] + rng.integers(-20, 21, (steps, size, size, 3)), 0, 255)
    images = images.astype(np.uint8)
    images[:, : size // 4] = 0  # a dark band at the top: an upside-down image would have it at the bottom
    wrist = np.clip(images.astype(np.int64) // 2 + rng.integers(0, 20, images.shape), 0, 255).astype(np.uint8)
    angles = rng.normal(size=(steps, 3)) * 0.5
    return {
        "images": images,
        "wrist_images": wrist,
        "ee_pos": rng.normal(size=(steps, 3)),
        "ee_ori": angles,
        "gripper_states": rng.uniform(-0.04, 0.04, (steps, 2)),
        "actions": ACTIONS[classes].astype(np.float64),
    }


def write_libero_file(
    path: Path,
    demos: list[dict[str, np.ndarray]],
    *,
    instruction: str = INSTRUCTION,
    convention: str | None = "opengl",
    proprio: str = "ee_pos",
) -> Path:
    """Write `demos` (upright images) in LIBERO's hdf5 layout; `proprio` is "ee_pos", "ee_states" or "robot_states"."""
    import h5py

    with h5py.File(path, "w") as handle:
        data = handle.create_group("data")
        data.attrs["problem_info"] = json.dumps(
            {"problem_name": "libero_tabletop_manipulation", "domain_name": "x", "language_instruction": instruction}
        )
        if convention is not None:
            data.attrs["macros_image_convention"] = convention
        for i, demo in enumerate(demos):
            group = data.create_group(f"demo_{i}")
            group.create_dataset("actions", data=demo["actions"])
            obs = group.create_group("obs")
            stored = demo["images"] if convention == "opencv" else demo["images"][:, ::-1, ::-1]
            obs.create_dataset("agentview_rgb", data=np.ascontiguousarray(stored))
            if "wrist_images" in demo:
                wrist = demo["wrist_images"] if convention == "opencv" else demo["wrist_images"][:, ::-1, ::-1]
                obs.create_dataset("eye_in_hand_rgb", data=np.ascontiguousarray(wrist))
            if proprio == "ee_pos":
                obs.create_dataset("ee_pos", data=demo["ee_pos"])
                obs.create_dataset("ee_ori", data=demo["ee_ori"])
            if proprio in ("ee_pos", "ee_states"):
                obs.create_dataset("ee_states", data=np.concatenate([demo["ee_pos"], demo["ee_ori"]], axis=1))
                obs.create_dataset("gripper_states", data=demo["gripper_states"])
            if proprio == "robot_states":
                quats = np.stack([_axis_angle_to_quat(v) for v in demo["ee_ori"]])
                group.create_dataset(
                    "robot_states", data=np.concatenate([demo["gripper_states"], demo["ee_pos"], quats], axis=1)
                )
        data.attrs["num_demos"] = len(demos)
    return path


def _axis_angle_to_quat(vector: np.ndarray) -> np.ndarray:
    """(x, y, z, w) quaternion of an axis-angle vector (robosuite's order)."""
    angle = float(np.linalg.norm(vector))
    if angle == 0.0:
        return np.array([0.0, 0.0, 0.0, 1.0])
    axis = vector / angle
    return np.concatenate([axis * np.sin(angle / 2.0), [np.cos(angle / 2.0)]])
