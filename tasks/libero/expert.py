"""A scripted expert for LIBERO's pick-and-place tasks, driven by the simulator's privileged state.

LIBERO's demonstration files are not on PyPI and no hub is reachable here, so the
demonstrations a CPU VLA is warm-started on have to be made: this expert reads what
a policy cannot see (the goal predicate of the task's BDDL file, object and fixture
poses and extents from MuJoCo) and acts only through the env's own 7-D interface
(end-effector delta, rotation delta, gripper), so its episodes are ones a policy
could have produced and replay exactly through `WMRL-LIBERO-v0`.

The plan is the classic one, each phase a waypoint reached by a proportional
controller with every command clipped to [-1, 1]: approach above the object,
descend, close the gripper, lift, carry above the target, descend, open, retreat.
Two choices make it work on LIBERO's objects:

- the gripper turns about the vertical so its fingers close across the object's
  narrow side (boxes of butter or cream cheese are wider than the open gripper
  lengthwise);
- an object wider than the gripper's opening (the black bowls of libero_spatial)
  is pinched at its rim, on the side facing along the fingers' axis.

Only ``(On ?x ?y)`` and ``(In ?x ?region)`` goals with one predicate are scripted
(every libero_object and libero_spatial task); others raise `UnsupportedTask`.

>>> import gymnasium as gym, wmrl_envs
>>> env = gym.make("WMRL-LIBERO-v0", suite="libero_object", task_id=0, cameras=()).unwrapped  # doctest: +SKIP
>>> obs, info = env.reset(options={"init_state": 0})  # doctest: +SKIP
>>> expert = ScriptedExpert(env)  # doctest: +SKIP
>>> obs, reward, done, cut, info = env.step(expert.act())  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from wmrl_envs.errors import WmrlError

__all__ = ["ExpertEpisode", "ExpertSettings", "ScriptedExpert", "UnsupportedTask", "run_expert"]

_OPEN, _CLOSE = -1.0, 1.0
_GRIPPER_OPENING = 0.07  # what the open Panda gripper can straddle, with a margin (metres)


class UnsupportedTask(WmrlError):
    """The task's goal is not a single On/In predicate the expert knows how to script."""


@dataclass(frozen=True)
class ExpertSettings:
    """Gains, tolerances and heights of the scripted expert (metres, radians, control steps)."""

    position_gain: float = 12.0
    """Action per metre of position error (saturates at 1 / gain metres)."""
    rotation_gain: float = 2.0
    """Action per radian of orientation error."""
    tolerance: float = 0.01
    """A waypoint is reached when the end effector is this close."""
    hover: float = 0.08
    """Height above the grasp (and release) point from which the gripper descends."""
    clearance: float = 0.06
    """How far above the highest obstacle on the way (object, target) the carried object's bottom travels."""
    grasp_depth: float = 0.03
    """How far below the object's top the fingers close (less for flat objects)."""
    rim_depth: float = 0.015
    """How far below a wide object's rim the fingers pinch it."""
    drop_height: float = 0.03
    """Height of the carried object's bottom above the target's surface when it is released."""
    gripper_steps: int = 12
    """Control steps the gripper is given to close or open."""
    waypoint_steps: int = 60
    """Steps after which a waypoint counts as reached anyway (an obstacle stopped the arm)."""


@dataclass(frozen=True)
class _Extent:
    """An object's axis-aligned box in the world (lo, hi corners), from its collision geometry."""

    lo: np.ndarray
    hi: np.ndarray

    @property
    def centre(self) -> np.ndarray:
        return (self.lo + self.hi) / 2.0


class ScriptedExpert:
    """Picks the goal's object and places it in or on the goal's target, through the env's 7-D actions."""

    def __init__(self, env: Any, settings: ExpertSettings | None = None) -> None:
        self.env = env
        self.settings = settings or ExpertSettings()
        self._plan: list[tuple[str, tuple[np.ndarray, float]]] = []
        self._phase = 0
        self._phase_steps = 0
        self._goal_rotation = np.eye(3)

    @property
    def done(self) -> bool:
        """Whether every phase of the plan has been carried out."""
        return bool(self._plan) and self._phase >= len(self._plan)

    def act(self) -> np.ndarray:
        """The next 7-D action in [-1, 1] (end-effector delta, rotation delta, gripper)."""
        if not self._plan:
            self._plan = self._make_plan()
        if self.done:
            return self._command(self._eef_pos(), self._goal_rotation, _OPEN)
        kind, (position, grip) = self._plan[self._phase]
        self._phase_steps += 1
        action = self._command(position, self._goal_rotation, grip)
        s = self.settings
        if kind == "gripper":
            finished = self._phase_steps >= s.gripper_steps
        else:
            reached = np.linalg.norm(position - self._eef_pos()) < s.tolerance
            finished = reached or self._phase_steps >= s.waypoint_steps
        if finished:
            self._phase += 1
            self._phase_steps = 0
        return action

    def _make_plan(self) -> list[tuple[str, tuple[np.ndarray, float]]]:
        """Waypoints from the scene as it is now: grasp point, carry height, release point."""
        s = self.settings
        obj, target = self._goal()
        extent = self._extent(obj)
        finger_axis = self._finger_axis()
        grasp, axis = self._grasp_point(obj, extent, finger_axis)
        self._goal_rotation = self._rotation_towards(finger_axis, axis)
        below_grip = grasp[2] - extent.lo[2]  # the carried object's bottom hangs this far below the gripper
        surface, place_xy, obstacle_top = self._target(target)
        held_off_centre = grasp[:2] - extent.centre[:2]  # a rim grasp holds the object beside the gripper
        release_xy = place_xy + held_off_centre
        release = np.array([release_xy[0], release_xy[1], surface + s.drop_height + below_grip])
        top_of_way = max(extent.hi[2], obstacle_top, surface)
        carry_z = max(top_of_way + s.clearance + below_grip, grasp[2] + s.hover, self._eef_pos()[2])
        above_grasp = grasp + [0.0, 0.0, s.hover]
        return [
            ("move", (np.array([grasp[0], grasp[1], max(above_grasp[2], self._eef_pos()[2] - 0.05)]), _OPEN)),
            ("move", (above_grasp, _OPEN)),
            ("move", (grasp, _OPEN)),
            ("gripper", (grasp, _CLOSE)),
            ("move", (np.array([grasp[0], grasp[1], carry_z]), _CLOSE)),
            ("move", (np.array([release[0], release[1], carry_z]), _CLOSE)),
            ("move", (release, _CLOSE)),
            ("gripper", (release, _OPEN)),
            ("move", (np.array([release[0], release[1], carry_z]), _OPEN)),
        ]

    def _goal(self) -> tuple[str, str]:
        """The object and the target of the task's one On/In goal predicate."""
        goal = self.env.simulator.parsed_problem["goal_state"]
        if len(goal) != 1 or len(goal[0]) != 3 or str(goal[0][0]).lower() not in ("on", "in"):
            raise UnsupportedTask(
                f"{self.env.task.id}: the scripted expert handles one (On x y) or (In x region) goal, got {goal}; "
                "it covers libero_object and libero_spatial"
            )
        return str(goal[0][1]), str(goal[0][2])

    def _grasp_point(self, obj: str, extent: _Extent, finger_axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where the fingers close, and the horizontal axis they should close along."""
        s = self.settings
        size = extent.hi - extent.lo
        height = size[2]
        if min(size[0], size[1]) > _GRIPPER_OPENING:  # too wide to straddle: pinch the rim nearest along the fingers
            radius = min(size[0], size[1]) / 2.0
            offset = finger_axis * (radius - 0.012)
            centre = extent.centre
            point = np.array([centre[0] + offset[0], centre[1] + offset[1], extent.hi[2] - s.rim_depth])
            return point, finger_axis
        narrow = self._narrow_axis(obj)
        depth = min(s.grasp_depth, height / 2.0)
        centre = self._body_pos(obj)
        return np.array([centre[0], centre[1], extent.hi[2] - depth]), narrow

    def _target(self, target: str) -> tuple[float, np.ndarray, float]:
        """The target's support height, its centre (x, y), and the top of what the carried object must clear."""
        sim = self.env.simulator
        if target in sim.objects_dict or target in sim.fixtures_dict:
            extent = self._extent(target)
            return float(extent.hi[2]), extent.centre[:2], float(extent.hi[2])
        site = sim.object_sites_dict.get(target)
        if site is None:
            raise UnsupportedTask(f"{self.env.task.id}: goal target {target!r} is neither an object nor a region")
        position = np.asarray(sim.sim.data.get_site_xpos(target), dtype=np.float64)
        owner = site.parent_name
        top = float(self._extent(owner).hi[2]) if owner in sim.objects_dict or owner in sim.fixtures_dict else 0.0
        return float(position[2]), position[:2], top

    def _narrow_axis(self, obj: str) -> np.ndarray:
        """The object's horizontal axis along which it is thinnest (unit, world frame)."""
        sim = self.env.simulator
        rotation = np.asarray(sim.sim.data.body_xmat[sim.obj_body_id[obj]]).reshape(3, 3)
        local = self._local_size(obj)
        candidates = [(local[i], rotation[:, i]) for i in range(3)]
        horizontal = [(size, axis) for size, axis in candidates if abs(axis[2]) < 0.7]
        _, axis = min(horizontal, key=lambda pair: pair[0])
        flat = np.array([axis[0], axis[1], 0.0])
        return flat / np.linalg.norm(flat)

    def _local_size(self, obj: str) -> np.ndarray:
        """The object's size along its own body axes, from its collision geoms' boxes."""
        sim = self.env.simulator
        body = sim.obj_body_id[obj]
        rotation = np.asarray(sim.sim.data.body_xmat[body]).reshape(3, 3)
        lo, hi = self._box(body, rotation, np.asarray(sim.sim.data.body_xpos[body]))
        return hi - lo

    def _extent(self, name: str) -> _Extent:
        """World-frame bounding box of an object's or fixture's collision geoms."""
        lo, hi = self._box(self.env.simulator.obj_body_id[name], np.eye(3), np.zeros(3))
        if not np.all(np.isfinite(lo)):
            raise UnsupportedTask(f"{self.env.task.id}: {name!r} has no collision geometry to grasp or place on")
        return _Extent(lo, hi)

    def _box(self, body: int, rotation: np.ndarray, origin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Corners of the box around `body`'s collision geoms, in the frame with axes `rotation` at `origin`."""
        sim = self.env.simulator
        model, data = sim.sim.model, sim.sim.data
        lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
        for geom in self._geoms(body):
            to_frame = rotation.T @ np.asarray(data.geom_xmat[geom]).reshape(3, 3)
            centre = rotation.T @ (np.asarray(data.geom_xpos[geom]) - origin) + to_frame @ model.geom_aabb[geom][:3]
            half = np.abs(to_frame) @ model.geom_aabb[geom][3:]
            lo, hi = np.minimum(lo, centre - half), np.maximum(hi, centre + half)
        return lo, hi

    def _geoms(self, body: int) -> list[int]:
        """Collision geoms of `body` and the bodies below it."""
        model = self.env.simulator.sim.model
        geoms = []
        for geom in range(model.ngeom):
            if model.geom_contype[geom] == 0 and model.geom_conaffinity[geom] == 0:
                continue
            owner = int(model.geom_bodyid[geom])
            while owner not in (0, body):
                owner = int(model.body_parentid[owner])
            if owner == body:
                geoms.append(geom)
        return geoms

    def _body_pos(self, name: str) -> np.ndarray:
        sim = self.env.simulator
        return np.asarray(sim.sim.data.body_xpos[sim.obj_body_id[name]], dtype=np.float64).copy()

    def _finger_axis(self) -> np.ndarray:
        """The horizontal direction the fingers close along, from the left to the right finger pad."""
        sim = self.env.simulator
        gripper = sim.robots[0].gripper
        data = sim.sim.data
        left = data.get_geom_xpos(gripper.important_geoms["left_fingerpad"][0])
        right = data.get_geom_xpos(gripper.important_geoms["right_fingerpad"][0])
        axis = np.array([right[0] - left[0], right[1] - left[1], 0.0])
        return axis / np.linalg.norm(axis)

    def _rotation_towards(self, finger_axis: np.ndarray, wanted: np.ndarray) -> np.ndarray:
        """The current gripper orientation turned about the vertical (by at most 90 degrees) to close along `wanted`."""
        angle = np.arctan2(wanted[1], wanted[0]) - np.arctan2(finger_axis[1], finger_axis[0])
        angle = (angle + np.pi / 2.0) % np.pi - np.pi / 2.0  # a gripper is symmetric: half a turn is the same grasp
        c, s = np.cos(angle), np.sin(angle)
        turn = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        return turn @ self._eef_rotation()

    def _eef_pos(self) -> np.ndarray:
        sim = self.env.simulator
        return np.asarray(sim.sim.data.site_xpos[sim.robots[0].eef_site_id], dtype=np.float64).copy()

    def _eef_rotation(self) -> np.ndarray:
        sim = self.env.simulator
        return np.asarray(sim.sim.data.site_xmat[sim.robots[0].eef_site_id], dtype=np.float64).reshape(3, 3)

    def _command(self, position: np.ndarray, rotation: np.ndarray, grip: float) -> np.ndarray:
        """Proportional steps towards `position` and `rotation`, clipped to the action box."""
        s = self.settings
        move = (position - self._eef_pos()) * s.position_gain
        turn = _axis_angle(rotation @ self._eef_rotation().T) * s.rotation_gain
        action = np.concatenate([move, turn, [grip]])
        return np.clip(action, -1.0, 1.0)


def _axis_angle(rotation: np.ndarray) -> np.ndarray:
    """The rotation vector (axis times angle) of a rotation matrix."""
    cosine = np.clip((np.trace(rotation) - 1.0) / 2.0, -1.0, 1.0)
    angle = np.arccos(cosine)
    if angle < 1e-6:
        return np.zeros(3)
    axis = np.array([rotation[2, 1] - rotation[1, 2], rotation[0, 2] - rotation[2, 0], rotation[1, 0] - rotation[0, 1]])
    return axis * (angle / (2.0 * np.sin(angle)))


@dataclass(frozen=True)
class ExpertEpisode:
    """How one expert episode ended: success, control steps taken, and the initial state it started from."""

    init_state: int
    success: bool
    steps: int


def run_expert(
    env: Any,
    init_state: int,
    seed: int,
    on_step: Callable[[dict[str, Any], np.ndarray], None] | None = None,
    settings: ExpertSettings | None = None,
    action_noise: float = 0.0,
) -> ExpertEpisode:
    """Reset `env` (a `LiberoEnv`) to official initial state `init_state` and let the expert act until it ends.

    `on_step(observation, action)` sees each observation with the expert's action from it (demonstration
    recording). With `action_noise` > 0 the env executes that action plus Gaussian noise of that standard
    deviation on its six arm dimensions (seeded by `seed`; the gripper is left alone), so the episode visits
    states off the expert's path while the recorded actions stay the expert's corrections (DART, Laskey et al.
    2017): a policy cloned from them learns to recover from its own drift.
    """
    if not 0.0 <= action_noise <= 1.0:
        raise ValueError(f"action_noise must be in [0, 1] (action units), got {action_noise}")
    expert = ScriptedExpert(env, settings)
    noise = np.random.default_rng(seed)
    observation, _ = env.reset(seed=seed, options={"init_state": init_state})
    done = cut = False
    steps = 0
    while not (done or cut):
        action = expert.act()
        if on_step is not None:
            on_step(observation, action)
        executed = action
        if action_noise > 0.0:
            executed = action.copy()
            executed[:6] = np.clip(action[:6] + noise.normal(0.0, action_noise, 6), -1.0, 1.0)
        observation, _, done, cut, _ = env.step(executed)
        steps += 1
    return ExpertEpisode(init_state=init_state, success=bool(done), steps=steps)
