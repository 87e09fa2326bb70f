"""The compute ledger counts real and predicted seconds apart, world-model calls on anchor groups included."""

from __future__ import annotations

import time

from choice_policy import KeywordPredictor
from wmrl_agents.grpo.ledger import ComputeLedger, ComputeMeter

from wmrl_envs.competition import Competition
from wmrl_envs.corrections import AnchorScheduler
from wmrl_envs.rewards import Corrected, Observed, Rollout, WorldModel, observe


def test_an_observer_of_the_corrected_source_sees_every_prediction(train_tasks: list[Competition]) -> None:
    wm_for_anchors, wm = WorldModel(KeywordPredictor()), WorldModel(KeywordPredictor())
    source = Corrected(wm_for_anchors, wm, scheduler=AnchorScheduler(fraction=0.5, seed=0))
    meter = ComputeMeter()
    assert observe(source, meter) is source and source.real is wm_for_anchors, "nothing is swapped in"
    assert observe(source, meter) is source  # observing twice does not count twice

    rollouts = [[Rollout(task, "print('hello')") for _ in range(3)] for task in train_tasks]
    source.score_groups(rollouts, step=0)
    spent = meter.take()
    assert spent.world_model_predictions == 3 + 6  # the anchor group's "real" part, and every group's world model
    assert spent.world_model_s == 9 * 0.001 and spent.real_runs == 0
    assert meter.take() == ComputeLedger()  # take() starts the count afresh


def test_a_plain_source_is_observed_through_a_wrapper_and_ledgers_add_up() -> None:
    source = WorldModel(KeywordPredictor())
    observed = observe(source, ComputeMeter())
    assert isinstance(observed, Observed) and observed.inner is source and observed.name == "world_model"
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
    meter = ComputeMeter()
    assert observe(_DownWorldModel(), meter).score([Rollout(train_tasks[0], "print(1)")] * 4) == [None] * 4
    spent = meter.take()
    assert spent.unscored == 4 and spent.unscored_s >= 0.05
    assert (spent.world_model_predictions, spent.world_model_s) == (0, 0.0)


def test_a_ledger_saved_before_failed_calls_were_counted_still_loads() -> None:
    old = {k: v for k, v in ComputeLedger(real_runs=3).to_dict().items() if k not in ("unscored", "unscored_s")}
    assert ComputeLedger.from_dict(old) == ComputeLedger(real_runs=3)
