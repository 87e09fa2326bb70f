"""Anchoring is scheduled over the run: one group per call through GroupVectorEnv runs ~10% for real, not all."""

from __future__ import annotations

import re

import gymnasium as gym
import pytest

import wmrl_envs  # noqa: F401  (registers the environments)
from wmrl_envs.competition import Competition
from wmrl_envs.corrections import AnchorScheduler
from wmrl_envs.rewards import Corrected, Score, WorldModel
from wmrl_envs.world_models import Prediction
from wmrl_envs.wrappers import GroupVectorEnv

G = 4


def _value(code: str) -> float:
    return float(re.search(r"# score=([0-9.]+)", code).group(1))


class SquaringPredictor:
    """A world model that reads the score written in the code, squared (biased, but it ranks right)."""

    def predict(self, competition: Competition, code: str) -> Prediction:
        return Prediction(position=_value(code) ** 2)


class CountingReal:
    """Real execution stand-in: the score written in the code; counts the rollouts it was asked to run."""

    name = "real"

    def __init__(self) -> None:
        self.runs = 0

    def score(self, batch):
        self.runs += len(batch)
        return [Score(_value(r.code), "real") for r in batch]


@pytest.mark.parametrize("fraction, expected", [(0.1, 2), (0.15, 3)])
def test_twenty_single_group_calls_anchor_the_configured_fraction_not_every_group(pool_root, fraction, expected):
    real = CountingReal()
    envs = gym.make_vec(
        "WMRL-MLEDojo-v0", num_envs=G, vectorization_mode="sync", split="all", data_root=pool_root, max_turns=1
    )
    source = Corrected(real, WorldModel(SquaringPredictor()), scheduler=AnchorScheduler(fraction=fraction, seed=0))
    group = GroupVectorEnv(envs, source)
    sources = []
    try:
        group.reset(seed=0)
        for call in range(40):  # every other step autoresets the group onto its next task
            replies = [f"```python\n# score={0.1 + 0.2 * i + 0.01 * call:.2f}\nprint(1)\n```" for i in range(G)]
            _, _, terminated, _, infos = group.step(replies)
            if terminated.all():
                sources.append(infos["group_source"][0])
    finally:
        group.close()
    assert len(sources) == 20
    anchored = sources.count("anchor")
    assert 1 <= anchored <= 4 and anchored == expected  # ceil(fraction * 20); a floor per call anchored all 20
    assert real.runs == G * anchored
    assert source.scheduler.realized_fraction == pytest.approx(expected / 20)


def test_a_multi_turn_group_is_an_anchor_or_not_for_its_whole_episode(pool_root) -> None:
    real = CountingReal()
    envs = gym.make_vec(
        "WMRL-MLEDojo-v0", num_envs=G, vectorization_mode="sync", split="all", data_root=pool_root, max_turns=3
    )
    source = Corrected(real, WorldModel(SquaringPredictor()), scheduler=AnchorScheduler(fraction=0.3, seed=1))
    group = GroupVectorEnv(envs, source, autoreset_mode="SameStep")
    episodes: list[list[str]] = [[]]
    try:
        group.reset(seed=0)
        for call in range(30):
            replies = [f"```python\n# score={0.1 + 0.2 * i + 0.01 * call:.2f}\nprint(1)\n```" for i in range(G)]
            _, _, terminated, _, infos = group.step(replies)
            episodes[-1].append(
                infos["final_info"]["group_source"][0] if terminated.all() else infos["group_source"][0]
            )
            if terminated.all():
                episodes.append([])
    finally:
        group.close()
    finished = [e for e in episodes if e]
    assert len(finished) == 10 and all(len(e) == 3 and len(set(e)) == 1 for e in finished), finished
    anchored = sum(e[0] == "anchor" for e in finished)
    assert 1 <= anchored <= 9 and real.runs == anchored * 3 * G, "an anchored episode runs every turn for real"
