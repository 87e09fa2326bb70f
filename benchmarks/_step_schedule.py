"""Discrete-event model of one RL step's rollouts on shared pools: generation, sandboxes, world-model server.

A step is a set of trajectories; each trajectory is a chain of turns, and each turn is a
generation followed by its scoring: a real execution on a sandbox, a world-model call, or
both at once (a WMRL anchor), the trajectory waiting for all of them before its next turn.
Everything runs as soon as it can: each pool has a number of identical slots and serves
its queue first come, first served (ties by trajectory, then turn), which is list
scheduling. This is what an asynchronous trainer with a bounded number of runs in flight
does, so the makespan is what a step of it takes, before the policy update.

With ``turn_barrier`` the trajectories meet after every turn, as in a trainer that
generates each turn for all trajectories in one batch (``wmrl train``): turn t+1 of any
trajectory starts once every trajectory that has a turn t has finished it.

List scheduling keeps Graham's guarantees, which the tests check: the makespan is at least
the longest chain and at least each pool's work over its slots, and (with a single
contended pool) at most the pool's work over its slots plus the longest chain.

Example:
    >>> simulate_step([[Turn(gen_s=1, exec_s=10)], [Turn(gen_s=1, exec_s=10)]], {"sandbox": 1}).makespan_s
    21.0
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from dataclasses import dataclass, field

__all__ = ["POOLS", "StepSchedule", "Turn", "simulate_step"]

POOLS = ("generation", "sandbox", "world_model")


@dataclass(frozen=True)
class Turn:
    """One turn's work in seconds; None: the turn does not use that pool."""

    gen_s: float = 0.0
    exec_s: float | None = None
    wm_s: float | None = None
    wm_on_sandbox: bool = False
    """The world model itself runs on a sandbox (the cheap-execution proxy), not on a server."""

    def jobs(self) -> list[tuple[str, float]]:
        """The (pool, seconds) of the turn's scoring, which run concurrently."""
        scoring = []
        if self.exec_s is not None:
            scoring.append(("sandbox", self.exec_s))
        if self.wm_s is not None:
            scoring.append(("sandbox" if self.wm_on_sandbox else "world_model", self.wm_s))
        return scoring


@dataclass
class StepSchedule:
    """When the step ended, when each trajectory ended, and how busy each pool was."""

    makespan_s: float
    finish_s: list[float]
    busy_s: dict[str, float] = field(default_factory=dict)
    waited_s: dict[str, float] = field(default_factory=dict)
    """Seconds jobs spent queued for a free slot, per pool."""


class _Pool:
    def __init__(self, slots: int | None) -> None:
        self.slots = slots
        self.running = 0
        self.queue: deque[tuple[float, int, int, float]] = deque()
        self.busy_s = 0.0
        self.waited_s = 0.0


def simulate_step(
    trajectories: list[list[Turn]], slots: dict[str, int | None], turn_barrier: bool = False
) -> StepSchedule:
    """Run the step's trajectories on pools of `slots` each (None or missing: unlimited); all start at time 0.

    `turn_barrier`: no trajectory starts turn t+1 before every trajectory has finished its turn t.
    """
    for name, count in slots.items():
        if name not in POOLS:
            raise ValueError(f"unknown pool {name!r}; pools are {', '.join(POOLS)}")
        if count is not None and count < 1:
            raise ValueError(f"pool {name!r} needs at least 1 slot (or None for unlimited), got {count}")
    pools = {name: _Pool(slots.get(name)) for name in POOLS}
    events: list[tuple[float, int, str, int]] = []
    order = itertools.count()
    turn_of = [0] * len(trajectories)
    waiting = [0] * len(trajectories)
    finish = [0.0] * len(trajectories)

    def start(name: str, now: float, traj: int, seconds: float, ready: float) -> None:
        pool = pools[name]
        pool.running += 1
        pool.busy_s += seconds
        pool.waited_s += now - ready
        heapq.heappush(events, (now + seconds, next(order), name, traj))

    def submit(name: str, now: float, traj: int, seconds: float) -> None:
        pool = pools[name]
        if pool.slots is None or pool.running < pool.slots:
            start(name, now, traj, seconds, now)
        else:
            pool.queue.append((now, next(order), traj, seconds))

    def begin_turn(traj: int, now: float) -> None:
        turns = trajectories[traj]
        if turn_of[traj] >= len(turns):
            finish[traj] = now
            return
        waiting[traj] = -1  # in generation
        submit("generation", now, traj, turns[turn_of[traj]].gen_s)

    at_barrier: dict[int, list[int]] = {}
    reaching = [sum(len(turns) > t for turns in trajectories) for t in range(max(map(len, trajectories), default=0))]

    def end_turn(traj: int, now: float) -> None:
        turn_of[traj] += 1
        if not turn_barrier:
            begin_turn(traj, now)
            return
        done = turn_of[traj] - 1
        if turn_of[traj] >= len(trajectories[traj]):
            finish[traj] = now  # its last turn: it ends now, and no longer holds the others back
        met = at_barrier.setdefault(done, [])
        met.append(traj)
        if len(met) == reaching[done]:
            for member in met:
                if turn_of[member] < len(trajectories[member]):
                    begin_turn(member, now)

    for traj in range(len(trajectories)):
        begin_turn(traj, 0.0)
    while events:
        now, _, name, traj = heapq.heappop(events)
        pool = pools[name]
        pool.running -= 1
        if pool.queue:
            ready, _, queued_traj, seconds = pool.queue.popleft()
            start(name, now, queued_traj, seconds, ready)
        if waiting[traj] == -1:  # generation done: score the turn
            jobs = trajectories[traj][turn_of[traj]].jobs()
            waiting[traj] = len(jobs)
            for job_pool, seconds in jobs:
                submit(job_pool, now, traj, seconds)
            if jobs:
                continue
        else:
            waiting[traj] -= 1
            if waiting[traj] > 0:
                continue
        end_turn(traj, now)
    return StepSchedule(
        makespan_s=max(finish, default=0.0),
        finish_s=finish,
        busy_s={name: pool.busy_s for name, pool in pools.items()},
        waited_s={name: pool.waited_s for name, pool in pools.items()},
    )
