"""LIBERO demonstration files (hdf5) as sequences of environment observations and actions.

LIBERO ships its demonstrations as one hdf5 file per task, written by its
``scripts/create_dataset.py``: ``data.attrs["problem_info"]`` is JSON holding the
``language_instruction``, and each ``data/demo_<i>`` group holds ``actions`` (T, 7),
``obs/agentview_rgb`` and ``obs/eye_in_hand_rgb`` (T, H, W, 3) uint8, and the
proprioception ``obs/ee_pos`` (3), ``obs/ee_ori`` (3, axis-angle), ``obs/ee_states``
(the two together) and ``obs/gripper_states`` (2, the finger joint positions).

A `Demonstration` gives them the form `WMRL-LIBERO-v0` observations have, so a policy
reads a demonstration step exactly as it reads the simulator:

- images are stored as robosuite renders them (OpenGL convention: upside down and
  mirrored; the file's ``macros_image_convention`` says so) and are rotated 180
  degrees with `wmrl_tasks.libero.observation.upright`, as the env does; a file
  written with the ``opencv`` convention is left as it is;
- the state is ``ee_pos``, ``ee_ori``, ``gripper_states``: the env's convention
  (end-effector position, axis-angle, finger positions), computed by LIBERO with the
  same quaternion-to-axis-angle formula, so it is exact up to float32 rounding. Files
  without ``ee_pos``/``ee_ori`` fall back to ``ee_states``, and files without those to
  the demo's ``robot_states`` (gripper qpos 2, eef pos 3, eef quaternion 4), converted
  with the env's own `quat_to_axis_angle`.

What is approximated: LIBERO's script records each observation *after* the action
at the same index was executed (and drops the first 5 steps of every original
demonstration), so a step pairs an action with the observation that followed it,
one control step (50 ms) later than what the policy would have seen; the pairing is
kept as the file has it, as LIBERO's own behaviour-cloning code does. Images keep the
file's resolution (128 px for the official files): a policy resizes them as it
resizes the env's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from wmrl_agents.policies.vla.base import ACTION_DIM
from wmrl_tasks.libero.observation import STATE_DIM, quat_to_axis_angle, upright

from wmrl_envs.errors import WmrlError

__all__ = ["DemoFileError", "Demonstration", "demo_names", "iter_demos", "read_demos"]


class DemoFileError(WmrlError):
    """A demonstration file that is missing, not hdf5, or not in LIBERO's layout; the message names file and key."""


@dataclass(frozen=True)
class Demonstration:
    """One demonstration: T steps of upright images, 8-D states and 7-D actions, and the task's instruction."""

    source: str
    instruction: str
    images: np.ndarray
    wrist_images: np.ndarray | None
    states: np.ndarray
    actions: np.ndarray

    def __len__(self) -> int:
        return len(self.actions)

    def observation(self, step: int) -> dict[str, Any]:
        """Step `step` as a WMRL-LIBERO-v0 observation dict ("image", "wrist_image" if recorded, "state", "instruction")."""
        observation: dict[str, Any] = {"image": self.images[step]}
        if self.wrist_images is not None:
            observation["wrist_image"] = self.wrist_images[step]
        observation["state"] = self.states[step]
        observation["instruction"] = self.instruction
        return observation

    def observations(self) -> Iterator[dict[str, Any]]:
        """Every step's observation, in order."""
        return (self.observation(t) for t in range(len(self)))


def demo_names(path: str | Path) -> list[str]:
    """The demonstration groups of a file (``demo_0``, ``demo_1``, ... in numeric order)."""
    with _open(Path(path)) as handle:
        return _names(handle, Path(path))


def iter_demos(path: str | Path, *, limit: int | None = None) -> Iterator[Demonstration]:
    """The file's demonstrations one at a time (at most `limit`), so a large file never sits in memory whole."""
    path = Path(path)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be a positive int (demonstrations per file) or None, got {limit!r}")
    _check_exists(path)
    return _iterate(path, limit)


def read_demos(path: str | Path, *, limit: int | None = None) -> list[Demonstration]:
    """Every demonstration of the file (at most `limit`)."""
    return list(iter_demos(path, limit=limit))


def _iterate(path: Path, limit: int | None) -> Iterator[Demonstration]:
    with _open(path) as handle:
        instruction = _instruction(handle, path)
        convention = _attr_text(handle["data"].attrs.get("macros_image_convention", "opengl"))
        for name in _names(handle, path)[:limit]:
            yield _demo(handle["data"][name], path, name, instruction, flip=convention != "opencv")


def _open(path: Path) -> Any:
    try:
        import h5py
    except ImportError as err:
        raise DemoFileError(f'reading LIBERO demonstrations needs h5py ({err}): pip install "wmrl[libero]"') from err
    _check_exists(path)
    try:
        return h5py.File(path, "r")
    except OSError as err:
        raise DemoFileError(f"{path} is not a readable HDF5 file (corrupt or of another format): {err}") from err


def _check_exists(path: Path) -> None:
    if not path.is_file():
        raise DemoFileError(
            f"no demonstration file at {path}: pass a LIBERO hdf5 file such as "
            "libero_spatial/<task>_demo.hdf5 (from LIBERO's download script or the Hugging Face LIBERO datasets)"
        )


def _names(handle: Any, path: Path) -> list[str]:
    data = _group(handle, "data", path)
    names = [name for name in data if name.startswith("demo_") and name[5:].isdigit()]
    if not names:
        raise DemoFileError(f"{path}: group 'data' holds no demo_<i> groups (found {sorted(data)[:10]})")
    return sorted(names, key=lambda name: int(name[5:]))


def _instruction(handle: Any, path: Path) -> str:
    data = _group(handle, "data", path)
    if "problem_info" not in data.attrs:
        raise DemoFileError(f"{path}: attribute data.attrs['problem_info'] is missing (it holds the instruction)")
    try:
        info = json.loads(_attr_text(data.attrs["problem_info"]))
        instruction = info["language_instruction"]
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise DemoFileError(
            f"{path}: data.attrs['problem_info'] must be JSON with a 'language_instruction' ({type(err).__name__}: {err})"
        ) from err
    if isinstance(instruction, list):  # some LIBERO files store it as a list of words
        instruction = " ".join(str(w) for w in instruction)
    if not isinstance(instruction, str) or not instruction.strip():
        raise DemoFileError(f"{path}: problem_info's language_instruction is empty or not text: {instruction!r}")
    return instruction.strip()


def _demo(group: Any, path: Path, name: str, instruction: str, *, flip: bool) -> Demonstration:
    where = f"{path}#{name}"
    actions = np.asarray(_dataset(group, "actions", path, name), dtype=np.float32)
    if actions.ndim != 2 or actions.shape[1] != ACTION_DIM or len(actions) == 0:
        raise DemoFileError(f"{where}: actions must be (T, {ACTION_DIM}) with T > 0, got shape {actions.shape}")
    bad = np.flatnonzero(~np.all(np.isfinite(actions), axis=1))
    if bad.size:
        raise DemoFileError(f"{where}: actions hold NaN or infinity at steps {bad[:10].tolist()}")
    steps = len(actions)
    images = _images(group, "obs/agentview_rgb", path, name, steps, flip)
    wrist = _images(group, "obs/eye_in_hand_rgb", path, name, steps, flip) if "obs/eye_in_hand_rgb" in group else None
    return Demonstration(where, instruction, images, wrist, _states(group, path, name, steps), actions)


def _images(group: Any, key: str, path: Path, name: str, steps: int, flip: bool) -> np.ndarray:
    images = np.asarray(_dataset(group, key, path, name))
    if images.dtype != np.uint8 or images.ndim != 4 or images.shape[3] != 3 or len(images) != steps:
        raise DemoFileError(
            f"{path}#{name}: {key} must be uint8 (T={steps}, H, W, 3) images, got {images.dtype} {images.shape}"
        )
    return np.stack([upright(frame) for frame in images]) if flip else images


def _states(group: Any, path: Path, name: str, steps: int) -> np.ndarray:
    """(T, 8) float32: eef position, axis-angle, gripper finger positions (see the module docstring)."""
    obs = group.get("obs", {})
    if "gripper_states" in obs and (("ee_pos" in obs and "ee_ori" in obs) or "ee_states" in obs):
        if "ee_pos" in obs and "ee_ori" in obs:
            pose = np.concatenate([np.asarray(obs["ee_pos"]), np.asarray(obs["ee_ori"])], axis=1)
        else:
            pose = np.asarray(obs["ee_states"])
        states = np.concatenate([pose, np.asarray(obs["gripper_states"])], axis=1)
    elif "robot_states" in group:
        robot = np.asarray(group["robot_states"], dtype=np.float64)
        if robot.ndim != 2 or robot.shape[1] != 9:
            raise DemoFileError(f"{path}#{name}: robot_states must be (T, 9), got {robot.shape}")
        angles = np.stack([quat_to_axis_angle(q) for q in robot[:, 5:9]]) if len(robot) else np.zeros((0, 3))
        states = np.concatenate([robot[:, 2:5], angles, robot[:, 0:2]], axis=1)
    else:
        raise DemoFileError(
            f"{path}#{name}: no proprioception: expected obs/ee_pos + obs/ee_ori (or obs/ee_states) with "
            "obs/gripper_states, or robot_states (the file may have been written with --no-proprio)"
        )
    states = states.astype(np.float32)
    if states.shape != (steps, STATE_DIM) or not np.all(np.isfinite(states)):
        raise DemoFileError(
            f"{path}#{name}: the proprioception must give {steps} finite {STATE_DIM}-D states (one per action), "
            f"got shape {states.shape}"
        )
    return states


def _group(handle: Any, key: str, path: Path) -> Any:
    if key not in handle:
        raise DemoFileError(f"{path}: group {key!r} is missing; it is not a LIBERO demonstration file")
    return handle[key]


def _dataset(group: Any, key: str, path: Path, name: str) -> Any:
    if key not in group:
        raise DemoFileError(f"{path}#{name}: dataset {key!r} is missing; LIBERO demo groups hold actions and obs/...")
    return group[key][()]


def _attr_text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
