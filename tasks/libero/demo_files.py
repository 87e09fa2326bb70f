"""Scripted demonstrations recorded from `WMRL-LIBERO-v0` and written in LIBERO's own hdf5 layout.

The layout is the one LIBERO's ``scripts/create_dataset.py`` writes, so every reader
of LIBERO's files (``wmrl sft``, ``wmrl libero-progress``, robomimic) reads these too:
``data.attrs`` holds ``problem_info`` (JSON with the ``language_instruction``),
``bddl_file_name``, ``bddl_file_content``, ``env_args``, ``macros_image_convention``,
``num_demos`` and ``total``; each ``data/demo_<i>`` holds ``actions`` (T, 7),
``states`` (the flattened MuJoCo state), ``robot_states`` (gripper qpos 2, eef
position 3, eef quaternion 4), ``rewards``, ``dones`` and ``obs/`` with
``agentview_rgb`` and ``eye_in_hand_rgb`` (as robosuite renders them: OpenGL's
upside-down convention, which the file says), ``ee_pos``, ``ee_ori``, ``ee_states``,
``gripper_states`` and ``joint_states``; its attrs give ``num_samples`` and the
``init_state`` index it started from.

One deliberate difference: step t pairs action t with the observation the expert
acted on, not the one that followed it (LIBERO's replay script records the latter,
one control step late), which is the pairing behaviour cloning wants. Files recorded
with action noise (``env_args["action_noise"]`` > 0) hold the expert's actions, not the
executed ones, so replaying their actions does not reproduce their states.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .expert import run_expert
from .observation import CAMERAS

__all__ = ["RecordedDemo", "record_expert_episode", "write_demo_file"]

_STEP_KEYS = ("agentview_rgb", "eye_in_hand_rgb", "ee_pos", "ee_ori", "gripper_states", "joint_states")


@dataclass
class RecordedDemo:
    """One expert episode, step by step, as the hdf5 file stores it."""

    init_state: int
    success: bool = False
    actions: list[np.ndarray] = field(default_factory=list)
    states: list[np.ndarray] = field(default_factory=list)
    robot_states: list[np.ndarray] = field(default_factory=list)
    obs: dict[str, list[np.ndarray]] = field(default_factory=lambda: {key: [] for key in _STEP_KEYS})

    def __len__(self) -> int:
        return len(self.actions)


def record_expert_episode(env: Any, init_state: int, seed: int, action_noise: float = 0.0) -> RecordedDemo:
    """Run the scripted expert from official initial state `init_state` of `env` (a `LiberoEnv` with both cameras);
    with `action_noise` the executed actions are perturbed and the recorded ones stay the expert's (`run_expert`)."""
    if set(env.cameras) != set(CAMERAS):
        raise ValueError(
            f"demonstrations record both cameras: make the env with cameras={tuple(CAMERAS)}, got {env.cameras}"
        )
    demo = RecordedDemo(init_state=init_state)
    episode = run_expert(
        env,
        init_state,
        seed,
        on_step=lambda observation, action: _record_step(demo, env, observation, action),
        action_noise=action_noise,
    )
    demo.success = episode.success
    return demo


def _record_step(demo: RecordedDemo, env: Any, observation: dict[str, Any], action: np.ndarray) -> None:
    """Append what the expert saw before `action`: images back in robosuite's orientation, proprioception, sim state."""
    sim = env.simulator
    robot = sim.robots[0]
    data = sim.sim.data
    state = np.asarray(observation["state"], dtype=np.float64)  # the env's own eef position, axis-angle, fingers
    eef_quat = np.roll(np.asarray(data.get_body_xquat(robot.robot_model.eef_name), dtype=np.float64), -1)  # xyzw
    demo.obs["agentview_rgb"].append(np.ascontiguousarray(observation["image"][::-1, ::-1]))
    demo.obs["eye_in_hand_rgb"].append(np.ascontiguousarray(observation["wrist_image"][::-1, ::-1]))
    demo.obs["ee_pos"].append(state[0:3])
    demo.obs["ee_ori"].append(state[3:6])
    demo.obs["gripper_states"].append(state[6:8])
    demo.obs["joint_states"].append(np.asarray(data.qpos[robot._ref_joint_pos_indexes], dtype=np.float64).copy())
    demo.robot_states.append(np.concatenate([state[6:8], state[0:3], eef_quat]))
    demo.states.append(env.sim_state())
    demo.actions.append(np.asarray(action, dtype=np.float64).copy())


def write_demo_file(path: str | Path, task: Any, demos: list[RecordedDemo], env_args: dict[str, Any]) -> Path:
    """Write `demos` of `task` (a `LiberoTask`) to `path` in LIBERO's hdf5 layout (see the module docstring)."""
    import h5py

    if not demos:
        raise ValueError(f"no demonstrations to write for {task.id}: every expert episode failed")
    path = Path(path)
    with h5py.File(path, "w") as handle:
        data = handle.create_group("data")
        data.attrs["problem_info"] = json.dumps(
            {
                "problem_name": _problem_name(task.bddl_file),
                "domain_name": "robosuite",
                "language_instruction": task.instruction,
            }
        )
        data.attrs["env_name"] = "wmrl-scripted-expert"
        data.attrs["env_args"] = json.dumps(env_args)
        data.attrs["bddl_file_name"] = str(task.bddl_file)
        data.attrs["bddl_file_content"] = Path(task.bddl_file).read_text()
        data.attrs["macros_image_convention"] = "opengl"
        for i, demo in enumerate(demos):
            group = data.create_group(f"demo_{i}")
            steps = len(demo)
            group.attrs["num_samples"] = steps
            group.attrs["init_state"] = demo.init_state
            group.create_dataset("actions", data=np.stack(demo.actions))
            group.create_dataset("states", data=np.stack(demo.states))
            group.create_dataset("robot_states", data=np.stack(demo.robot_states))
            rewards = np.zeros(steps, dtype=np.uint8)
            rewards[-1] = 1
            group.create_dataset("rewards", data=rewards)
            group.create_dataset("dones", data=rewards.copy())
            obs = group.create_group("obs")
            for key in _STEP_KEYS:
                obs.create_dataset(key, data=np.stack(demo.obs[key]))
            obs.create_dataset("ee_states", data=np.concatenate([obs["ee_pos"][()], obs["ee_ori"][()]], axis=1))
        data.attrs["num_demos"] = len(demos)
        data.attrs["total"] = sum(len(demo) for demo in demos)
    return path


def _problem_name(bddl_file: Path) -> str:
    """The ``(problem ...)`` name of a BDDL file (LIBERO's problem class, e.g. ``LIBERO_Tabletop_Manipulation``)."""
    text = Path(bddl_file).read_text()
    marker = "(problem "
    start = text.find(marker)
    if start < 0:
        return "unknown"
    return text[start + len(marker) :].split(")", 1)[0].strip()
