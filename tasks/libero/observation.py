"""What a LIBERO policy sees: upright camera images, an 8-D proprioceptive state, and the instruction.

robosuite renders with OpenGL's origin at the bottom-left, so its images come out
upside down and mirrored; they are rotated 180 degrees here (both axes flipped),
as OpenVLA's and openpi's LIBERO clients do, so a model trained on upright images
sees the scene as a person would. The state is the convention of those clients
too: end-effector position (3), end-effector orientation as an axis-angle vector
(3), and the two gripper finger joint positions (2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from wmrl_envs.spaces import UnicodeText

__all__ = [
    "CAMERAS",
    "INSTRUCTION_MAX_LENGTH",
    "STATE_DIM",
    "build_observation",
    "observation_space",
    "proprio_state",
    "quat_to_axis_angle",
    "upright",
]

CAMERAS = {"image": "agentview", "wrist_image": "robot0_eye_in_hand"}
"""Observation key -> robosuite camera: the third-person view and the wrist view."""

STATE_DIM = 8
INSTRUCTION_MAX_LENGTH = 512


def observation_space(cameras: Sequence[str], image_size: int) -> spaces.Dict:
    """The Dict space of an environment rendering `cameras` (observation keys) at `image_size` pixels square."""
    fields: dict[str, spaces.Space[Any]] = {
        key: spaces.Box(0, 255, (image_size, image_size, 3), np.uint8) for key in cameras
    }
    fields["state"] = spaces.Box(-np.inf, np.inf, (STATE_DIM,), np.float32)
    fields["instruction"] = UnicodeText(max_length=INSTRUCTION_MAX_LENGTH)
    return spaces.Dict(fields)


def build_observation(raw: Mapping[str, np.ndarray], cameras: Sequence[str], instruction: str) -> dict[str, Any]:
    """wmrl's observation from robosuite's observation dict."""
    observation: dict[str, Any] = {key: upright(raw[f"{CAMERAS[key]}_image"]) for key in cameras}
    observation["state"] = proprio_state(raw)
    observation["instruction"] = instruction
    return observation


def upright(image: np.ndarray) -> np.ndarray:
    """A robosuite camera image rotated 180 degrees (both axes flipped), as a contiguous uint8 array."""
    return np.ascontiguousarray(image[::-1, ::-1], dtype=np.uint8)


def proprio_state(raw: Mapping[str, np.ndarray]) -> np.ndarray:
    """End-effector position, axis-angle orientation and gripper finger positions, as float32 (8,)."""
    return np.concatenate(
        [raw["robot0_eef_pos"], quat_to_axis_angle(raw["robot0_eef_quat"]), raw["robot0_gripper_qpos"]]
    ).astype(np.float32)


def quat_to_axis_angle(quat: np.ndarray) -> np.ndarray:
    """Axis-angle vector (axis times angle in radians) of a unit quaternion in robosuite's (x, y, z, w) order."""
    x, y, z, w = (float(v) for v in quat)
    w = min(max(w, -1.0), 1.0)
    sine = np.sqrt(1.0 - w * w)
    if np.isclose(sine, 0.0):
        return np.zeros(3)
    return np.array([x, y, z]) * (2.0 * np.arccos(w) / sine)
