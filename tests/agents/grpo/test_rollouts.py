"""Rollouts follow the environment's rules: failed turns cost nothing and score 0, feedback is real, best turn wins."""

from __future__ import annotations

import pytest
from choice_policy import ChoicePolicy, KeywordPredictor
from wmrl_agents.grpo.ledger import ComputeMeter
from wmrl_agents.grpo.rollouts import Trajectory, collect_rollouts
from wmrl_agents.policy import Episode

from wmrl_envs.competition import Competition
from wmrl_envs.rewards import Corrected, RealExecution, WorldModel, observe
from wmrl_envs.sandbox.base import Limits

LIMITS = Limits(wall_time_s=60, memory_mb=2048)


def _collect(source, tasks, *, group_size=2, max_turns=2, logits=(0.0, 0.0, 0.0), step_index=0):
    return collect_rollouts(
        ChoicePolicy(logits),
        source,
        tasks,
        group_size=group_size,
        max_turns=max_turns,
        limits=LIMITS,
        temperature=1.0,
        top_p=1.0,
        seeds=list(range(11, 11 + max_turns)),
        step_index=step_index,
    )


@pytest.mark.slow
def test_real_turns_get_the_run_report_and_failed_turns_never_reach_the_sandbox(
    train_tasks: list[Competition],
) -> None:
    meter = ComputeMeter()
    source = observe(RealExecution(limits=LIMITS), meter)
    rollouts = _collect(source, train_tasks[:1], group_size=3, max_turns=2)
    spent = meter.take()
    trajectories = rollouts.groups[0]
    turns = [(t, i) for t in trajectories for i in range(2)]
    with_code = [(t, i) for t, i in turns if t.episode.turns[i].sample.code is not None]
    assert spent.real_runs == len(with_code)  # a reply without a program costs no sandbox run
    assert spent.real_execution_s > 0
    for t, i in turns:
        turn = t.episode.turns[i]
        assert turn.feedback.startswith(f"# Result of submission {i + 1}/2")
        if turn.sample.code is None:
            assert t.values[i] == 0.0 and "Not run:" in turn.feedback
        else:
            assert "Run: " in turn.feedback and t.values[i] == t.scores[i].value  # the real run's report
    for t in trajectories:
        assert t.reward == max(t.values)  # the environment's return: the best turn
        assert len(t.prefixes()) == 2 and t.prefixes()[1][0].turns == t.episode.turns[:1]
    summary = rollouts.summary()
    assert summary["failed_turns"] + summary["real_scored"] == 6 and summary["world_model_scored"] == 0


def test_world_model_turns_get_the_prediction_as_feedback_and_one_unscored_turn_voids_the_trajectory(
    train_tasks: list[Competition],
) -> None:
    rollouts = _collect(WorldModel(KeywordPredictor()), train_tasks, group_size=4, max_turns=2)
    for group in rollouts.groups:
        for t in group:
            for turn in t.episode.turns:
                if turn.sample.code is not None:
                    assert "Predicted by the world_model reward source (not executed)" in turn.feedback
    assert [g.weight for g in rollouts.group_scores] == [1.0, 1.0]

    unscored = Trajectory(Episode(train_tasks[0], "prompt"), values=[0.7, None], scores=[None, None])
    assert unscored.reward is None  # its best turn may be the one nobody scored


def test_corrected_scoring_anchors_whole_groups_across_all_turns(train_tasks: list[Competition]) -> None:
    from wmrl_envs.corrections import AnchorScheduler, FallbackConfig, FallbackRule

    config = FallbackConfig(healthy_anchor_fraction=0.5, degraded_anchor_fraction=0.5)
    source = Corrected(
        WorldModel(KeywordPredictor()),  # an instant "real" stand-in keeps this test in milliseconds
        WorldModel(KeywordPredictor()),
        scheduler=AnchorScheduler(fraction=0.5, seed=0),
        fallback=FallbackRule(config),
    )
    rollouts = _collect(source, train_tasks, group_size=2, max_turns=3, logits=(0.0, 0.0, -5.0), step_index=3)
    assert [(d["step"], d["turn"]) for d in rollouts.turn_diagnostics] == [(9, 0), (9, 1), (9, 2)]
    assert all(d["n_anchor_groups"] == 1 for d in rollouts.turn_diagnostics)  # half of two groups
    # The anchor group is an anchor at every turn, the other group never is: the paper's whole-group anchors.
    assert sorted(rollouts.group_labels) == ["anchor+anchor+anchor", "world_model+world_model+world_model"]
    assert source.scheduler.diagnostics()["total_groups"] == 2  # the step's groups are counted once
    last = rollouts.turn_diagnostics[-1]
    for label, score in zip(rollouts.group_labels, rollouts.group_scores, strict=True):
        anchor = label.startswith("anchor")
        assert score.source == ("anchor" if anchor else "world_model")
        assert score.weight == (last["anchor_weight"] if anchor else last["world_model_weight"])
    for group, score in zip(rollouts.groups, rollouts.group_scores, strict=True):
        # What the world model said of each trajectory (its best turn), anchors included: the PPI estimator's input.
        expected = [
            max(0.0 if s is None else s.detail.get("calibrated_world_model_value", s.value) for s in t.scores)
            for t in group
        ]
        assert score.diagnostics["world_model_rewards"] == expected
