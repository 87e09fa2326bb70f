"""LIBERO's reward sources: terminal success anchors, predicted progress, and the two through Corrected."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from libero_synthetic import INSTRUCTION, synthetic_batch
from wmrl_tasks.libero.progress_model import ProgressModelConfig, TinyProgressModel, progress_examples
from wmrl_tasks.libero.rewards import ProgressWorldModel, TerminalSuccess
from wmrl_tasks.libero.rollout import EpisodeRollout

from wmrl_envs.rewards import ANCHOR, WORLD_MODEL, Corrected, Rollout
from wmrl_envs.world_models.base import PredictedStatus, Prediction, PredictorError

torch.set_num_threads(1)


def _episode(success: bool | None, steps: int = 5) -> EpisodeRollout:
    frames = np.full((steps + 1, 8, 8, 3), 100, np.uint8)
    return EpisodeRollout(task="libero_spatial/0", instruction=INSTRUCTION, frames=frames, success=success)


class _Answers:
    """A progress predictor that gives fixed answers in turn and records the frames it was shown."""

    def __init__(self, *answers, n_frames: int = 4) -> None:
        self.answers = list(answers)
        self.n_frames = n_frames
        self.shown: list[np.ndarray] = []

    def predict(self, instruction: str, frames: np.ndarray) -> Prediction | None:
        self.shown.append(frames)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_terminal_success_is_one_zero_or_unknown():
    scores = TerminalSuccess().score([_episode(True), _episode(False), _episode(None)])
    assert [s.value if s else None for s in scores] == [1.0, 0.0, None]
    assert scores[0].source == "real" and scores[0].detail["steps"] == 5


def test_the_world_model_sees_n_frames_spread_over_the_episode():
    predictor = _Answers(Prediction(position=0.4))
    frames = np.arange(11)[:, None, None, None] * np.ones((1, 8, 8, 3), np.uint8)
    episode = EpisodeRollout(task="t", instruction=INSTRUCTION, frames=frames, success=False)
    (score,) = ProgressWorldModel(predictor).score([episode])
    assert score.value == 0.4 and score.source == "world_model"
    assert predictor.shown[0][:, 0, 0, 0].tolist() == [0, 3, 7, 10]


def test_no_answer_or_a_broken_answer_is_unscored_never_zero():
    predictor = _Answers(
        None,
        PredictorError("server down"),
        ConnectionError("refused"),
        Prediction(position=math.nan),
        Prediction(position=1.7),
        Prediction(position=None, status=PredictedStatus.CRASHES),
    )
    scores = ProgressWorldModel(predictor).score([_episode(False) for _ in range(6)])
    assert [s.value if s else None for s in scores] == [None, None, None, None, 1.0, 0.0]


def test_misuse_is_a_clear_error():
    with pytest.raises(TypeError, match="ProgressPredictor"):
        ProgressWorldModel(object())
    with pytest.raises(TypeError, match="EpisodeRollouts"):
        TerminalSuccess().score([Rollout(competition=None, code="print(1)")])
    with pytest.raises(TypeError, match="must return a Prediction"):
        ProgressWorldModel(_Answers(0.5)).score([_episode(True)])


@pytest.mark.slow
def test_corrected_anchors_progress_on_success_and_rewards_successes_more():
    train, _ = synthetic_batch(seed=10, n=24)
    model = TinyProgressModel(ProgressModelConfig(frame_size=16, epochs=25))
    model.fit(progress_examples(train, prefixes=2))
    source = Corrected(TerminalSuccess(), ProgressWorldModel(model), seed=0)

    world_model_rewards = {True: [], False: []}
    for step in range(6):
        episodes, _ = synthetic_batch(seed=100 + step, n=40)
        groups = [episodes[i : i + 4] for i in range(0, 40, 4)]
        for group, scored in zip(groups, source.score_groups(groups)):
            assert all(r is not None and 0.0 <= r <= 1.0 for r in scored.rewards)
            if scored.source == ANCHOR:  # anchors pay the simulator's verdict, nothing else
                assert scored.rewards == [float(e.success) for e in group]
            else:
                assert scored.source == WORLD_MODEL
                for episode, reward in zip(group, scored.rewards):
                    world_model_rewards[episode.success].append(reward)
    assert source.diagnostics()["debiaser"]["n_pairs"] >= 24
    assert np.mean(world_model_rewards[True]) > np.mean(world_model_rewards[False]) + 0.3
