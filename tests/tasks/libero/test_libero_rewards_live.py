"""The reward side on real LIBERO rollouts: recorded episodes, success anchors, predicted progress, Corrected."""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym
import numpy as np
import pytest
import torch
from wmrl_tasks.libero.progress_model import ProgressModelConfig, TinyProgressModel, progress_examples
from wmrl_tasks.libero.recording import record_episode
from wmrl_tasks.libero.rewards import ProgressWorldModel, TerminalSuccess

from wmrl_envs.rewards import ANCHOR, Corrected

pytestmark = pytest.mark.slow
torch.set_num_threads(1)

HOLD = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0])


def _place_bowl_on_plate(env: gym.Env) -> Callable[[dict], np.ndarray]:
    """A privileged 'policy' that puts the bowl on the plate on its first call, then holds still."""
    placed = []

    def act(observation: dict) -> np.ndarray:
        if not placed:
            sim = env.unwrapped.simulator
            plate = sim.sim.data.body_xpos[sim.sim.model.body_name2id(sim.objects_dict["plate_1"].root_body)]
            joint = sim.objects_dict["akita_black_bowl_1"].joints[-1]
            sim.sim.data.set_joint_qpos(joint, np.concatenate([plate + [0.0, 0.0, 0.03], [1.0, 0.0, 0.0, 0.0]]))
            sim.sim.forward()
            placed.append(True)
        return HOLD

    return act


def test_recorded_rollouts_are_scored_by_success_and_by_calibrated_progress(libero_env: gym.Env):
    successes = [record_episode(libero_env, _place_bowl_on_plate(libero_env), init_state=i) for i in (0, 1)]
    failures = [record_episode(libero_env, lambda _: HOLD, init_state=i, max_steps=3) for i in (0, 1)]
    for episode in successes + failures:
        assert episode.frames.shape[1:] == (64, 64, 3) and episode.steps == len(episode.frames) - 1 >= 1
        assert episode.instruction == libero_env.unwrapped.task.instruction
    assert [e.success for e in successes + failures] == [True, True, False, False]
    assert [e.init_state for e in failures] == [0, 1]

    model = TinyProgressModel(ProgressModelConfig(frame_size=16, epochs=5))
    model.fit(progress_examples(successes + failures, prefixes=1))
    source = Corrected(TerminalSuccess(), ProgressWorldModel(model), seed=0)
    groups = [[successes[0], failures[0]], [successes[1], failures[1]]]
    for _ in range(2):
        for group, scored in zip(groups, source.score_groups(groups)):
            assert all(r is not None and 0.0 <= r <= 1.0 for r in scored.rewards)
            if scored.source == ANCHOR:
                assert scored.rewards == [1.0, 0.0]
    assert source.debiaser.n_pairs >= 2
