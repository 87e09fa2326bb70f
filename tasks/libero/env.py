"""``WMRL-LIBERO-v0``: one LIBERO manipulation task as a Gymnasium environment.

An episode starts from one of the task's official initial states (``"train"``: the
first 16, ``"eval"``: all 50, or explicit indices; drawn with the env's seeded RNG,
or chosen with ``reset(options={"init_state": k})``, which is how a GRPO group
shares one start). After the reset the arm holds still for `settle_steps` control
steps, with the cameras off, while the objects LIBERO places in the air come to
rest (OpenVLA's evaluation does the same; those steps do not count).

Each step applies a 7-D action in [-1, 1]: an end-effector delta (position 3,
rotation 3, for robosuite's OSC_POSE controller) and the gripper (-1 opens, +1
closes). The reward is sparse: 1.0 on the step the task succeeds, which ends the
episode (``terminated``); otherwise 0. With a `reward_source` (``reward_source=``, or
`wmrl_envs.wrappers.WithRewardSource`) the env records the third-person frames and
scores the finished episode with it, as an `EpisodeRollout`: the last step pays that
score (a progress world model's prediction, `Corrected`'s anchored or calibrated
reward; 0 with ``info["scored"] == False`` when it could not score) and the others 0.
Episodes must then end inside the env (success, `horizon`): a ``max_episode_steps``
cut from outside would never be scored. The episode is cut (``truncated``) after the
suite's step limit (`EPISODE_LIMITS`) or `horizon`; ``gym.make``'s
``max_episode_steps`` adds Gymnasium's time limit on top, so it can only shorten
an episode. ``instruction_encoding="hashed"`` or ``"none"`` makes every observation
an array (see `observation`), as stable-baselines3's policies need. A malformed action (wrong shape, NaN) raises before the simulator
sees it, so the episode can go on; finite values outside [-1, 1] are clipped.

The simulator is built at the first `reset`, not in the constructor: making the env
only checks its arguments and works out its spaces. That is what keeps async vector
envs safe under the default fork start method (`AsyncVectorEnv` makes one env in the
parent to read its spaces, and an OpenGL context made there would hang every forked
child), and it makes the env cheap to pickle: like Gymnasium's MuJoCo envs it
pickles as its constructor arguments (``EzPickle``), so an unpickled env is a fresh
one with the same configuration.

Speed: scenes are reset in place (``hard_reset=False``: ~0.2 s instead of ~2 s),
only the cameras in `cameras` are rendered (``cameras=()`` renders nothing, for
state-only rollouts), and only the observables the observation uses are computed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle

from wmrl_envs.rewards import RewardSource, Score, score_step

from .observation import CAMERAS, build_observation, observation_space
from .rollout import EpisodeRollout
from .runtime import load_libero, probe_rendering
from .suites import EPISODE_LIMITS, LiberoTask, check_suite, load_task, select_init_states

__all__ = ["ACTION_DIM", "LiberoEnv"]

ACTION_DIM = 7
MAX_IMAGE_SIZE = 1024  # a sanity bound: robosuite grows its render buffer to fit, and VLAs read 224-256 px
_SETTLE_ACTION = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0])  # hold still, gripper open
_PROPRIO_OBSERVABLES = ("robot0_eef_pos", "robot0_eef_quat", "robot0_gripper_qpos")


class LiberoEnv(gym.Env[dict[str, Any], np.ndarray], EzPickle):
    """A LIBERO task: camera images + proprioception + instruction in, 7-D end-effector actions out.

    >>> import gymnasium as gym, wmrl_envs
    >>> env = gym.make("WMRL-LIBERO-v0", suite="libero_spatial", task_id=0, image_size=128)  # doctest: +SKIP
    >>> obs, info = env.reset(seed=0)  # doctest: +SKIP
    >>> obs["image"].shape, obs["state"].shape, obs["instruction"]  # doctest: +SKIP
    ((128, 128, 3), (8,), 'pick up the black bowl between the plate and the ramekin and place it on the plate')
    >>> obs, reward, terminated, truncated, info = env.step(env.action_space.sample())  # doctest: +SKIP
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 20}

    def __init__(
        self,
        suite: str = "libero_spatial",
        task_id: int = 0,
        image_size: int = 128,
        cameras: Sequence[str] = ("image", "wrist_image"),
        init_states: str | Sequence[int] = "train",
        horizon: int | None = None,
        settle_steps: int = 10,
        assets_dir: str | os.PathLike[str] | None = None,
        render_mode: str | None = None,
        instruction_encoding: str = "text",
        reward_source: RewardSource | None = None,
    ) -> None:
        check_suite(suite)
        cameras = _checked_cameras(cameras)
        if isinstance(image_size, bool) or not isinstance(image_size, int) or not 8 <= image_size <= MAX_IMAGE_SIZE:
            raise ValueError(f"image_size must be an int in [8, {MAX_IMAGE_SIZE}] (pixels, square), got {image_size!r}")
        limit = EPISODE_LIMITS[suite] if horizon is None else horizon
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"horizon must be a positive int (steps per episode), got {horizon!r}")
        if isinstance(settle_steps, bool) or not isinstance(settle_steps, int) or settle_steps < 0:
            raise ValueError(f"settle_steps must be an int >= 0, got {settle_steps!r}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        if render_mode == "rgb_array" and "image" not in cameras:
            raise ValueError("render_mode='rgb_array' shows the third-person camera: include 'image' in cameras")
        space = observation_space(cameras, image_size, instruction_encoding)  # also checks instruction_encoding

        EzPickle.__init__(
            self,
            suite,
            task_id,
            image_size,
            cameras,
            init_states,
            horizon,
            settle_steps,
            assets_dir,
            render_mode,
            instruction_encoding,
        )
        runtime = load_libero(assets_dir, rendering=bool(cameras), probe=False)
        self.task: LiberoTask = load_task(runtime, suite, task_id)
        self.init_state_indices = select_init_states(init_states, len(self.task.init_states))
        self.cameras = cameras
        self.image_size = image_size
        self.horizon = limit
        self.settle_steps = settle_steps
        self.render_mode = render_mode
        self.instruction_encoding = instruction_encoding
        self.observation_space = space
        self.action_space = spaces.Box(-1.0, 1.0, (ACTION_DIM,), np.float32)

        self._control_env = runtime.control_env
        self._sim: Any = None
        self._closed = False
        self._camera_observables = [f"{CAMERAS[key]}_image" for key in cameras]
        self._reward_source: RewardSource | None = None
        self.reward_source = reward_source
        self._frames: list[np.ndarray] = []
        self._steps = 0
        self._init_index: int | None = None
        self._episode_over = True
        self._last_observation: dict[str, Any] | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode from an official initial state: ``options={"init_state": k}``, else a seeded draw."""
        super().reset(seed=seed)
        self._open()
        index = self._choose_init_state(options or {})
        with self._cameras_off():  # nothing is rendered until the scene has settled
            with _global_numpy_seed(int(self.np_random.integers(2**32))):
                self._sim.reset()
            _release_grippers(self._sim.env)
            self._sim.set_init_state(self.task.init_states[index])
            for _ in range(self.settle_steps):
                self._sim.step(_SETTLE_ACTION)
        self._make_render_context_current()
        raw = self._sim.env._get_observations(force_update=True)
        self._init_index = index
        self._steps = 0
        self._episode_over = False
        observation = self._observation(raw)
        self._frames = [observation["image"]] if self._reward_source is not None else []
        return observation, self._info(success=False)

    def step(self, action: np.ndarray) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Apply one end-effector action; reward 1.0 and ``terminated`` when the task succeeds."""
        if self._closed:
            raise RuntimeError("the environment is closed; make a new one")
        if self._episode_over:
            raise RuntimeError("the episode is over (or never started): call reset() before step()")
        command = _checked_action(action)
        self._make_render_context_current()
        raw, _, _, _ = self._sim.step(command)
        self._steps += 1
        success = bool(self._sim.check_success())
        truncated = not success and self._steps >= self.horizon
        self._episode_over = success or truncated
        observation = self._observation(raw)
        info = self._info(success=success)
        if self._reward_source is None:
            return observation, float(success), success, truncated, info
        self._frames.append(observation["image"])
        reward = 0.0
        if self._episode_over:
            score = self._score_episode(success)
            reward = 0.0 if score is None else float(score.value)
            info.update(scored=score is not None, reward_source=None if score is None else score.source)
        return observation, reward, success, truncated, info

    @property
    def reward_source(self) -> RewardSource | None:
        """What scores finished episodes (None: the simulator's sparse success reward, step by step)."""
        return self._reward_source

    @reward_source.setter
    def reward_source(self, source: RewardSource | None) -> None:
        if source is not None:
            if not callable(getattr(source, "score", None)):
                raise TypeError(
                    f"reward_source must be a RewardSource (TerminalSuccess, ProgressWorldModel, Corrected, ...), "
                    f"got {type(source).__name__}"
                )
            if "image" not in self.cameras:
                raise ValueError(
                    "a reward source scores the episode's third-person frames: make the env with 'image' in cameras="
                )
        self._reward_source = source
        # Pickled as a constructor argument (EzPickle), so a source installed later (WithRewardSource) travels too.
        self._ezpickle_kwargs = {**self._ezpickle_kwargs, "reward_source": source}

    def render(self) -> np.ndarray | None:
        """The last third-person frame (upright) for ``render_mode="rgb_array"``; None without a render mode."""
        if self.render_mode is None:
            return None
        if self._last_observation is None:
            raise RuntimeError("nothing to render yet: call reset() first")
        return self._last_observation["image"]

    def close(self) -> None:
        """Free the simulator and its rendering context (safe to call twice)."""
        sim = getattr(self, "_sim", None)
        if sim is not None:
            sim.close()
            self._sim = None
        self._closed = True

    @property
    def simulator(self) -> Any:
        """The underlying robosuite environment, for privileged access (object poses for scripted experts, tests)."""
        return self._open().env

    def sim_state(self) -> np.ndarray:
        """The flattened MuJoCo state (time, positions, velocities): what an initial state file stores."""
        self._open()
        return np.asarray(self._sim.get_sim_state(), dtype=np.float64).copy()

    def _open(self) -> Any:
        """The simulator, built on first use (see the module docstring for why not in the constructor)."""
        if self._closed:
            raise RuntimeError("the environment is closed; make a new one")
        if self._sim is None:
            if self.cameras:
                probe_rendering()
            self._sim = self._control_env(
                bddl_file_name=str(self.task.bddl_file),
                use_camera_obs=bool(self.cameras),
                has_offscreen_renderer=bool(self.cameras),
                camera_names=[CAMERAS[key] for key in self.cameras],
                camera_heights=self.image_size,
                camera_widths=self.image_size,
                hard_reset=False,
                ignore_done=True,
                horizon=self.horizon + self.settle_steps + 1,
            )
            _keep_only(self._sim.env, set(_PROPRIO_OBSERVABLES) | set(self._camera_observables))
        return self._sim

    def _choose_init_state(self, options: dict[str, Any]) -> int:
        unknown = set(options) - {"init_state"}
        if unknown:
            raise ValueError(f"unknown reset options {sorted(unknown)}; the only option is 'init_state'")
        if "init_state" in options:
            (index,) = select_init_states([options["init_state"]], len(self.task.init_states))
            return index
        return int(self.np_random.choice(self.init_state_indices))

    def _make_render_context_current(self) -> None:
        """Render into this env's own OpenGL context.

        robosuite renders into whichever context is current and never switches: with several environments in one
        process (a vector env), each would otherwise draw into the last one created, or into a freed one.
        """
        context = getattr(self._sim.env.sim, "_render_context_offscreen", None)
        if context is not None:
            context.gl_ctx.make_current()

    @contextlib.contextmanager
    def _cameras_off(self) -> Iterator[None]:
        _set_enabled(self._sim.env, self._camera_observables, False)
        try:
            yield
        finally:
            _set_enabled(self._sim.env, self._camera_observables, True)

    def _observation(self, raw: dict[str, np.ndarray]) -> dict[str, Any]:
        observation = build_observation(raw, self.cameras, self.task.instruction, self.instruction_encoding)
        self._last_observation = observation
        return observation

    def _score_episode(self, success: bool) -> Score | None:
        """The reward source's score of the episode just finished (None: it could not score it)."""
        assert self._reward_source is not None
        episode = EpisodeRollout(
            task=self.task.id,
            instruction=self.task.instruction,
            frames=np.stack(self._frames),
            success=success,
            init_state=self._init_index,
        )
        self._frames = []
        return score_step(self._reward_source, [[episode]]).scores[0][0]

    def _info(self, success: bool) -> dict[str, Any]:
        return {"success": success, "init_state": self._init_index, "task": self.task.id, "steps": self._steps}


def _checked_cameras(cameras: Sequence[str]) -> tuple[str, ...]:
    if isinstance(cameras, str):
        raise TypeError(
            f"cameras must be a sequence of observation keys such as ('image',), got the string {cameras!r}"
        )
    chosen = tuple(cameras)
    unknown = [key for key in chosen if key not in CAMERAS]
    if unknown or len(set(chosen)) != len(chosen):
        raise ValueError(f"cameras must be distinct keys among {tuple(CAMERAS)}, got {chosen!r}")
    return chosen


def _checked_action(action: Any) -> np.ndarray:
    """The action as float64 (7,), clipped to [-1, 1]; ValueError for a wrong shape or a non-finite value."""
    try:
        command = np.asarray(action, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"the action must be {ACTION_DIM} numbers, got {type(action).__name__}: {err}") from err
    if command.shape != (ACTION_DIM,):
        raise ValueError(
            f"the action must have shape ({ACTION_DIM},) (end-effector delta xyz, rotation xyz, gripper), "
            f"got shape {command.shape}"
        )
    bad = np.flatnonzero(~np.isfinite(command))
    if bad.size:
        raise ValueError(f"the action has NaN or infinite values at positions {bad.tolist()}: {command.tolist()}")
    return np.clip(command, -1.0, 1.0)


def _keep_only(sim_env: Any, keep: set[str]) -> None:
    """Disable every robosuite observable outside `keep`: the rest (object poses, joints) would be computed for nothing."""
    for name in sim_env.observation_names:
        if name not in keep:
            sim_env.modify_observable(name, "enabled", False)


@contextlib.contextmanager
def _global_numpy_seed(seed: int) -> Iterator[None]:
    """Run with numpy's global RNG seeded, then restore it.

    LIBERO re-samples the fixtures' poses (cabinet, stove, ...: a centimetre or two) from numpy's global RNG at every
    reset, and the initial-state files do not record them; seeding it from the env's RNG makes episodes reproducible
    while keeping LIBERO's jitter, without disturbing anyone else's use of the global RNG.
    """
    saved = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(saved)


def _release_grippers(sim_env: Any) -> None:
    """Zero each gripper's command memory, as a freshly loaded model has it.

    robosuite's grippers integrate their command across steps and only a hard reset (reloading the model) clears
    it; with in-place resets a new episode would otherwise start from the last episode's grip.
    """
    for robot in sim_env.robots:
        robot.gripper.current_action = np.zeros(robot.gripper.dof)


def _set_enabled(sim_env: Any, names: list[str], enabled: bool) -> None:
    for name in names:
        sim_env.modify_observable(name, "enabled", enabled)
