"""The compute ledger counts real and predicted seconds apart, world-model calls on anchor groups included."""

from __future__ import annotations

import time

from choice_policy import KeywordPredictor
from wmrl_agents.grpo.ledger import ComputeLedger, MeteredSource, install_meters

from wmrl_envs.competition import Competition
from wmrl_envs.corrections import AnchorScheduler
from wmrl_envs.rewards import Corrected, Rollout, WorldModel


def test_meters_inside_the_corrected_source_count_every_prediction(train_tasks: list[Competition]) -> None:
    wm_for_anchors, wm = WorldModel(KeywordPredictor()), WorldModel(KeywordPredictor())
    source = Corrected(wm_for_anchors, wm, scheduler=AnchorScheduler(fraction=0.5, seed=0))
    scored, meters = install_meters(source)
    assert scored is source and [m.inner for m in meters] == [wm_for_anchors, wm]
    assert install_meters(source)[1] == meters  # installing twice does not double-wrap

    rollouts = [[Rollout(task, "print('hello')") for _ in range(3)] for task in train_tasks]
    source.score_groups(rollouts, step=0)
    real, predicted = (m.take() for m in meters)
    assert real.world_model_predictions == 3  # the one anchor group, by the "real" part
    assert predicted.world_model_predictions == 6  # every group, anchors included
    assert predicted.world_model_s == 6 * 0.001 and predicted.real_runs == 0
    assert meters[1].take() == ComputeLedger()  # take() starts the count afresh


def test_a_plain_source_is_wrapped_whole_and_ledgers_add_up() -> None:
    source = WorldModel(KeywordPredictor())
    scored, [meter] = install_meters(source)
    assert isinstance(scored, MeteredSource) and scored is meter and scored.name == "world_model"
    total = ComputeLedger(real_execution_s=1.0, real_runs=1)
    total.add(ComputeLedger(real_execution_s=2.5, real_runs=2, generation_s=0.5))
    assert (total.real_execution_s, total.real_runs, total.generation_s) == (3.5, 3, 0.5)
    assert ComputeLedger.from_dict(total.to_dict()) == total


class _DownWorldModel:
    """A world model whose server is down: every call takes time and scores nothing."""

    name = "world_model"

    def score(self, batch: list[Rollout]) -> list[None]:
        time.sleep(0.05)
        return [None] * len(batch)


def test_failed_calls_are_counted_with_the_time_they_took(train_tasks: list[Competition]) -> None:
    meter = MeteredSource(_DownWorldModel())
    assert meter.score([Rollout(train_tasks[0], "print(1)")] * 4) == [None] * 4
    spent = meter.take()
    assert spent.unscored == 4 and spent.unscored_s >= 0.05
    assert (spent.world_model_predictions, spent.world_model_s) == (0, 0.0)


def test_a_ledger_saved_before_failed_calls_were_counted_still_loads() -> None:
    old = {k: v for k, v in ComputeLedger(real_runs=3).to_dict().items() if k not in ("unscored", "unscored_s")}
    assert ComputeLedger.from_dict(old) == ComputeLedger(real_runs=3)
