"""What a LIBERO policy sees: upright camera images, an 8-D proprioceptive state, and the instruction.

robosuite renders with OpenGL's origin at the bottom-left, so its images come out
upside down and mirrored; they are rotated 180 degrees here (both axes flipped),
as OpenVLA's and openpi's LIBERO clients do, so a model trained on upright images
sees the scene as a person would. The state is the convention of those clients
too: end-effector position (3), end-effector orientation as an axis-angle vector
(3), and the two gripper finger joint positions (2).

The instruction comes in one of `INSTRUCTION_ENCODINGS`: ``"text"`` (the sentence,
for language-conditioned policies), ``"hashed"`` (a fixed-size multi-hot vector of
its hashed words, `instruction_word_ids`, so that libraries whose policies read only
arrays, such as stable-baselines3, can still tell tasks apart), or ``"none"``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from wmrl_envs.spaces import UnicodeText

from .instruction_words import instruction_word_ids

__all__ = [
    "CAMERAS",
    "INSTRUCTION_BUCKETS",
    "INSTRUCTION_ENCODINGS",
    "INSTRUCTION_MAX_LENGTH",
    "STATE_DIM",
    "build_observation",
    "check_instruction_encoding",
    "encode_instruction",
    "observation_space",
    "proprio_state",
    "quat_to_axis_angle",
    "upright",
]

CAMERAS = {"image": "agentview", "wrist_image": "robot0_eye_in_hand"}
"""Observation key -> robosuite camera: the third-person view and the wrist view."""

STATE_DIM = 8
INSTRUCTION_MAX_LENGTH = 512
INSTRUCTION_ENCODINGS = ("text", "hashed", "none")
INSTRUCTION_BUCKETS = 64
"""Length of the ``"hashed"`` instruction vector (fixed, so the space is the same for every suite and task)."""


def observation_space(cameras: Sequence[str], image_size: int, instruction_encoding: str = "text") -> spaces.Dict:
    """The Dict space of an environment rendering `cameras` (observation keys) at `image_size` pixels square."""
    check_instruction_encoding(instruction_encoding)
    fields: dict[str, spaces.Space[Any]] = {
        key: spaces.Box(0, 255, (image_size, image_size, 3), np.uint8) for key in cameras
    }
    fields["state"] = spaces.Box(-np.inf, np.inf, (STATE_DIM,), np.float32)
    if instruction_encoding == "text":
        fields["instruction"] = UnicodeText(max_length=INSTRUCTION_MAX_LENGTH)
    elif instruction_encoding == "hashed":
        fields["instruction"] = spaces.Box(0.0, 1.0, (INSTRUCTION_BUCKETS,), np.float32)
    return spaces.Dict(fields)


def build_observation(
    raw: Mapping[str, np.ndarray], cameras: Sequence[str], instruction: str, instruction_encoding: str = "text"
) -> dict[str, Any]:
    """wmrl's observation from robosuite's observation dict."""
    observation: dict[str, Any] = {key: upright(raw[f"{CAMERAS[key]}_image"]) for key in cameras}
    observation["state"] = proprio_state(raw)
    if instruction_encoding != "none":
        observation["instruction"] = encode_instruction(instruction, instruction_encoding)
    return observation


def check_instruction_encoding(instruction_encoding: str) -> None:
    """Raise ValueError naming the choices unless `instruction_encoding` is one of `INSTRUCTION_ENCODINGS`."""
    if instruction_encoding not in INSTRUCTION_ENCODINGS:
        raise ValueError(f"instruction_encoding must be one of {INSTRUCTION_ENCODINGS}, got {instruction_encoding!r}")


def encode_instruction(instruction: str, instruction_encoding: str) -> str | np.ndarray:
    """The instruction as text, or as a float32 multi-hot vector over `INSTRUCTION_BUCKETS` hashed words."""
    if instruction_encoding == "text":
        return instruction
    vector = np.zeros(INSTRUCTION_BUCKETS, dtype=np.float32)
    vector[instruction_word_ids(instruction, INSTRUCTION_BUCKETS)] = 1.0
    return vector


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
