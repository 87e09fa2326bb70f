"""Corrected: anchors get real rewards, world-model groups calibrated ones, weights stay bounded, state resumes."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from wmrl_envs.competition import Category, Competition
from wmrl_envs.corrections import (
    AnchorScheduler,
    FallbackConfig,
    FallbackRule,
    OnlineDebiaser,
    StateDictError,
)
from wmrl_envs.rewards import (
    ANCHOR,
    WORLD_MODEL,
    Corrected,
    GroupRewardSource,
    Rollout,
    Score,
    group_advantages,
)

COMPETITION = Competition(
    id="toy",
    description="",
    metric="rmse",
    higher_is_better=False,
    category=Category.REGRESSION,
    id_column="id",
    target_columns=("y",),
    public_dir=Path("/nonexistent/public"),
    private_dir=Path("/nonexistent/private"),
    answers_path=Path("/nonexistent/private/answers.csv"),
    sample_submission_path=Path("/nonexistent/public/sample.csv"),
)


class Table:
    """A reward source that answers from a dict keyed by the code, and remembers what it was asked."""

    def __init__(self, name: str, table: dict[str, float | None]) -> None:
        self.name, self.table, self.seen = name, table, []

    def score(self, batch):
        self.seen.extend(r.code for r in batch)
        return [None if self.table.get(r.code) is None else Score(self.table[r.code], self.name) for r in batch]


def _codes(n: int, prefix: str = "c") -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def _sources(real_of: dict[str, float], distort=lambda r: r**3) -> tuple[Table, Table]:
    return Table("real", dict(real_of)), Table("world_model", {c: distort(r) for c, r in real_of.items()})


def _groups(codes: list[str], size: int) -> list[list[Rollout]]:
    return [[Rollout(COMPETITION, c) for c in codes[i : i + size]] for i in range(0, len(codes), size)]


@pytest.fixture
def world():
    rng = np.random.default_rng(0)
    codes = _codes(400)
    real_of = {c: float(v) for c, v in zip(codes, rng.uniform(0.0, 1.0, len(codes)))}
    return codes, real_of


def _corrected(real: Table, wm: Table, **kwargs) -> Corrected:
    kwargs.setdefault("debiaser", OnlineDebiaser(min_pairs=8, refit_every=8))
    return Corrected(real, wm, **kwargs)


def test_anchors_get_real_rewards_and_other_groups_the_calibrated_world_model(world) -> None:
    codes, real_of = world
    real, wm = _sources(real_of)
    corrected = _corrected(real, wm)
    assert isinstance(corrected, GroupRewardSource)
    for step in range(6):
        groups = _groups(codes[step * 40 : (step + 1) * 40], 4)
        scored = corrected.score_groups(groups)
        anchors = [g for g, s in enumerate(scored) if s.source == ANCHOR]
        assert len(anchors) >= 1
        for g, group_score in enumerate(scored):
            group_codes = [r.code for r in groups[g]]
            if group_score.source == ANCHOR:
                assert group_score.rewards == [real_of[c] for c in group_codes]
                assert all(s.source == "real" for s in group_score.scores)
            else:
                expected = [corrected.debiaser.transform(real_of[c] ** 3) for c in group_codes]
                assert group_score.rewards == pytest.approx(expected)
                assert group_score.source == WORLD_MODEL
        # Real execution ran the anchors only; the world model scored everything, anchors included.
        assert set(real.seen[-4 * len(anchors) :]) == {r.code for g in anchors for r in groups[g]}
        assert wm.seen[-40:] == [r.code for group in groups for r in group]
    assert len(real.seen) < len(wm.seen) / 3


def test_calibration_undoes_a_monotone_non_affine_world_model(world) -> None:
    codes, real_of = world
    corrected = _corrected(*_sources(real_of), scheduler=AnchorScheduler(fraction=0.5, seed=1))
    for step in range(5):
        scored = corrected.score_groups(_groups(codes[step * 40 : (step + 1) * 40], 4))
    assert all(g.diagnostics["calibrated"] for g in scored)
    unseen = codes[-50:]  # the steps above used codes[:200] only
    raw_error = np.mean([(real_of[c] ** 3 - real_of[c]) ** 2 for c in unseen])
    calibrated_error = np.mean([(corrected.debiaser.transform(real_of[c] ** 3) - real_of[c]) ** 2 for c in unseen])
    assert calibrated_error < raw_error / 5


def test_group_weights_stay_in_their_bounds_under_a_noisy_world_model(world) -> None:
    codes, real_of = world
    rng = np.random.default_rng(3)
    noisy = {c: float(np.clip(r + rng.normal(0, 0.3), 0, 1)) for c, r in real_of.items()}
    corrected = _corrected(Table("real", real_of), Table("world_model", noisy))
    for step in range(10):
        for group_score in corrected.score_groups(_groups(codes[step * 40 : (step + 1) * 40], 4)):
            if group_score.source == ANCHOR:
                assert 1.0 <= group_score.weight <= 4.0
            else:
                assert group_score.weight in (0.0, 1.0)
            assert group_score.diagnostics["anchor_weight"] >= 1.0
            assert 0.0 < group_score.diagnostics["realized_anchor_fraction"] <= 1.0


def test_a_world_model_that_ranks_backwards_falls_back_to_real_execution(world) -> None:
    codes, real_of = world
    real, wm = _sources(real_of, distort=lambda r: 1.0 - r)
    fallback = FallbackRule(FallbackConfig(rank_window=2, min_rank_observations=2))
    corrected = _corrected(real, wm, fallback=fallback)
    for step in range(3):
        scored = corrected.score_groups(_groups(codes[step * 40 : (step + 1) * 40], 4))
    assert scored[0].diagnostics["fallback_state"] == "fallen_back"
    assert corrected.scheduler.fraction == 1.0
    after = corrected.score_groups(_groups(codes[120:160], 4))
    assert {g.source for g in after} == {ANCHOR}, "fallen back: every group is scored by real execution"
    assert all(g.weight == 4.0 for g in after)
    assert wm.seen[-40:] == codes[120:160], "anchors are still scored by the world model, so it can recover"


def test_empty_groups_singletons_and_a_silent_world_model_never_give_nan(world) -> None:
    codes, real_of = world
    real = Table("real", real_of)
    silent = Table("world_model", {})
    corrected = _corrected(real, silent, scheduler=AnchorScheduler(fraction=0.5, seed=0))
    groups = [[], [Rollout(COMPETITION, codes[0])], _groups(codes[1:5], 4)[0], _groups(codes[5:9], 4)[0]]
    scored = corrected.score_groups(groups)
    assert scored[0].rewards == [] and scored[0].scores == []
    for group, group_score in zip(groups, scored):
        expected = [real_of[r.code] for r in group]
        if group_score.source == ANCHOR:
            assert group_score.rewards == expected
        else:
            assert group_score.rewards == [None] * len(expected)
        assert group_score.diagnostics["n_unscored"] == group_score.rewards.count(None)
    assert corrected.debiaser.n_pairs == 0, "no world-model answer, no pairs"
    for advantages in group_advantages(scored):
        assert all(a is None or math.isfinite(a) for a in advantages)
    singleton = group_advantages([scored[1]])[0]
    assert singleton in ([0.0], [None])


def test_a_nan_or_out_of_range_score_from_a_source_is_contained(world) -> None:
    codes, _ = world
    real = Table("real", {codes[0]: float("nan"), codes[1]: 1.7, codes[2]: 0.5})
    corrected = _corrected(real, Table("world_model", {c: 0.5 for c in codes[:3]}))
    (group_score,) = corrected.score_groups([[Rollout(COMPETITION, c) for c in codes[:3]]])
    assert group_score.rewards == [None, 1.0, 0.5]


def test_score_treats_a_flat_batch_as_one_anchor_group(world) -> None:
    codes, real_of = world
    real, wm = _sources(real_of)
    corrected = _corrected(real, wm)
    scores = corrected.score([Rollout(COMPETITION, c) for c in codes[:3]])
    assert [s.value for s in scores] == [real_of[c] for c in codes[:3]]
    assert [s.detail["world_model_value"] for s in scores] == pytest.approx([real_of[c] ** 3 for c in codes[:3]])
    assert corrected.score([]) == []


def test_steps_default_to_the_next_one_and_must_increase(world) -> None:
    codes, real_of = world
    corrected = _corrected(*_sources(real_of))
    groups = _groups(codes[:8], 4)
    assert corrected.score_groups(groups)[0].diagnostics["step"] == 0
    assert corrected.score_groups(groups, step=5)[0].diagnostics["step"] == 5
    assert corrected.score_groups(groups)[0].diagnostics["step"] == 6
    with pytest.raises(ValueError, match="strictly increase"):
        corrected.score_groups(groups, step=6)
    with pytest.raises(TypeError, match="must be one rollout"):
        corrected.score_groups([["not a rollout"]])


def test_a_source_returning_the_wrong_number_of_scores_is_an_error(world) -> None:
    codes, _ = world

    class Short:
        name = "world_model"

        def score(self, batch):
            return []

    corrected = Corrected(Table("real", {}), Short())
    with pytest.raises(ValueError, match="returned 0 scores for 2 rollouts"):
        corrected.score_groups(_groups(codes[:2], 2))


def _run(corrected: Corrected, codes: list[str], steps: range) -> list:
    return [corrected.score_groups(_groups(codes[s * 40 : (s + 1) * 40], 4)) for s in steps]


def _comparable(scored) -> list:
    return [[(g.rewards, g.source, g.weight, g.diagnostics) for g in step] for step in scored]


def test_a_run_resumed_from_its_state_dict_continues_exactly(world) -> None:
    codes, real_of = world
    rng = np.random.default_rng(7)
    noisy = {c: float(np.clip(r**2 + rng.normal(0, 0.1), 0, 1)) for c, r in real_of.items()}

    def fresh() -> Corrected:
        return _corrected(Table("real", real_of), Table("world_model", noisy))

    uninterrupted = fresh()
    _run(uninterrupted, codes, range(4))
    state = json.loads(json.dumps(uninterrupted.state_dict()))
    expected = _run(uninterrupted, codes, range(4, 8))

    resumed = Corrected(Table("real", real_of), Table("world_model", noisy))
    resumed.load_state_dict(state)
    assert _comparable(_run(resumed, codes, range(4, 8))) == _comparable(expected)


def test_a_corrupt_state_is_rejected_by_key_and_changes_nothing(world) -> None:
    codes, real_of = world
    corrected = _corrected(*_sources(real_of))
    _run(corrected, codes, range(2))
    before = corrected.state_dict()
    for corrupt in (
        {**before, "next_step": -1},
        {**before, "debiaser": {**before["debiaser"], "n_pairs": "many"}},
        {**before, "scheduler": {**before["scheduler"], "fraction": 3.0}},
        {**before, "next_step": 0},
        {k: v for k, v in before.items() if k != "fallback"},
    ):
        with pytest.raises(StateDictError):
            corrected.load_state_dict(corrupt)
        assert corrected.state_dict() == before


def test_debiasing_off_keeps_raw_predictions_and_weighs_anchors_by_their_residuals(world) -> None:
    codes, real_of = world
    corrected = _corrected(*_sources(real_of), debias=False)
    for step in range(6):
        scored = corrected.score_groups(_groups(codes[step * 40 : (step + 1) * 40], 4))
    for group_score in scored:
        assert not group_score.diagnostics["calibrated"]
        if group_score.source == WORLD_MODEL:
            raw = [s.detail["uncalibrated_value"] for s in group_score.scores]
            assert group_score.rewards == pytest.approx(raw)
    # r^3 against r: raw residuals are large, so the anchors weigh more than the world model.
    assert corrected.weighter.residual_variance > 0
    assert max(g.weight for g in scored if g.source == ANCHOR) > 1.0


def test_denoising_off_keeps_anchor_weight_one_while_the_map_still_calibrates(world) -> None:
    codes, real_of = world
    rng = np.random.default_rng(3)
    noisy = {c: float(np.clip(r**3 + rng.normal(0, 0.3), 0, 1)) for c, r in real_of.items()}
    corrected = _corrected(Table("real", real_of), Table("world_model", noisy), denoise=False)
    for step in range(8):
        scored = corrected.score_groups(_groups(codes[step * 40 : (step + 1) * 40], 4))
        assert all(g.weight == 1.0 for g in scored if g.source == ANCHOR)
    assert all(g.diagnostics["calibrated"] for g in scored)
    assert all(g.diagnostics["corrections"] == {"debias": True, "denoise": False} for g in scored)


def test_the_ablations_differ_from_wmrl_only_in_the_correction_they_switch_off(world) -> None:
    codes, real_of = world
    rng = np.random.default_rng(5)
    noisy = {c: float(np.clip(1.0 - r + rng.normal(0, 0.05), 0, 1)) for c, r in real_of.items()}  # ranks backwards
    runs = {}
    for name, kwargs in (("wmrl", {}), ("debias_only", {"denoise": False}), ("denoise_only", {"debias": False})):
        fallback = FallbackRule(FallbackConfig(rank_window=2, min_rank_observations=2))
        corrected = _corrected(Table("real", real_of), Table("world_model", noisy), fallback=fallback, **kwargs)
        runs[name] = [corrected.score_groups(_groups(codes[s * 40 : (s + 1) * 40], 4)) for s in range(4)]
    # Denoising off leaves every signal of the fallback rule as it was: the same anchors and states as wmrl.
    assert [[(g.source, g.diagnostics["fallback_state"]) for g in step] for step in runs["debias_only"]] == [
        [(g.source, g.diagnostics["fallback_state"]) for g in step] for step in runs["wmrl"]
    ]
    for name, steps in runs.items():
        # After the fallback every group is an anchor at the fallen-back floor, whichever correction is off
        # (debias_only used to force weight 1 here).
        assert steps[-1][0].diagnostics["fallback_state"] == "fallen_back", name
        assert {g.weight for g in steps[-1]} == {4.0}, name
    # Debiasing off changes the world-model groups' rewards only; anchors keep their real scores.
    for a, b in zip(runs["wmrl"][0], runs["denoise_only"][0]):
        if a.source == ANCHOR:
            assert a.rewards == b.rewards


def test_later_turns_of_a_step_keep_its_anchor_groups_and_refuse_another_step(world) -> None:
    codes, real_of = world
    corrected = _corrected(*_sources(real_of), scheduler=AnchorScheduler(fraction=0.3, seed=2))
    first = corrected.score_groups(_groups(codes[:40], 4), step=4)
    anchors = [g for g, s in enumerate(first) if s.source == ANCHOR]
    for turn in (1, 2):
        later = corrected.score_groups(_groups(codes[40 * turn : 40 * (turn + 1)], 4), step=4, turn=turn)
        assert [g for g, s in enumerate(later) if s.source == ANCHOR] == anchors
        assert later[0].diagnostics["turn"] == turn
    assert corrected.scheduler.diagnostics()["total_groups"] == 10
    resumed = _corrected(*_sources(real_of))
    resumed.load_state_dict(json.loads(json.dumps(corrected.state_dict())))
    again = resumed.score_groups(_groups(codes[:40], 4), step=4, turn=3)
    assert [g for g, s in enumerate(again) if s.source == ANCHOR] == anchors
    with pytest.raises(ValueError, match="continues the step opened at turn 0"):
        corrected.score_groups(_groups(codes[:36], 4), step=4, turn=1)  # 9 groups, not 10
    with pytest.raises(ValueError, match="continues the step opened at turn 0"):
        corrected.score_groups(_groups(codes[:40], 4), step=5, turn=1)


def test_a_state_saved_before_turns_shared_anchors_resumes(world) -> None:
    codes, real_of = world
    corrected = _corrected(*_sources(real_of))
    corrected.score_groups(_groups(codes[:40], 4))
    old = {k: v for k, v in corrected.state_dict().items() if k != "open_step"}
    resumed = _corrected(*_sources(real_of))
    resumed.load_state_dict(old)
    assert resumed.score_groups(_groups(codes[40:80], 4))[0].diagnostics["step"] == 1


class CostlyTable(Table):
    """A Table whose scores report a cost per rollout, as real execution and world models do."""

    def __init__(self, name: str, table: dict[str, float | None], cost_s: float) -> None:
        super().__init__(name, table)
        self.cost_s = cost_s

    def score(self, batch):
        return [None if s is None else dataclasses.replace(s, cost_s=self.cost_s) for s in super().score(batch)]


def test_the_adaptive_fraction_follows_the_measured_noise_and_costs(world) -> None:
    from wmrl_envs.corrections import AdaptiveAnchorFraction

    codes, real_of = world
    rng = np.random.default_rng(4)
    noisy = {c: float(np.clip(r + rng.normal(0, 0.1), 0, 1)) for c, r in real_of.items()}
    adaptive = AdaptiveAnchorFraction(min_fraction=0.02, cost_smoothing=0.0)
    corrected = _corrected(
        CostlyTable("real", real_of, cost_s=20.0), CostlyTable("world_model", noisy, 0.5), adaptive=adaptive
    )
    for step in range(8):
        scored = corrected.score_groups(_groups(codes[step * 40 : (step + 1) * 40], 4))
    s2 = corrected.weighter.residual_variance
    assert s2 is not None and scored[0].diagnostics["fallback_state"] == "healthy"
    assert corrected.scheduler.fraction == pytest.approx(max(0.02, math.sqrt(s2 * 0.5 / 20.0)))
    assert scored[0].diagnostics["next_anchor_fraction"] == corrected.scheduler.fraction
    resumed = _corrected(Table("real", real_of), Table("world_model", noisy), adaptive=AdaptiveAnchorFraction())
    resumed.load_state_dict(json.loads(json.dumps(corrected.state_dict())))
    assert resumed.adaptive.state_dict() == adaptive.state_dict()
