"""The compute ledger counts real and predicted seconds apart, world-model calls on anchor groups included."""

from __future__ import annotations

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
