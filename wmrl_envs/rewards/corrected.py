"""Corrected: the WMRL reward source, a world model kept honest by a small stream of real executions.

World-model rewards are real rewards plus a bias and noise. Per training step a
few groups (about 10%) are anchors, scored by BOTH real execution and the world
model; their pairs are the only ground truth the corrections get. Every step runs,
in this order (the order is the method, not a detail):

1. choose the anchor groups (`AnchorScheduler`, reproducible per step);
2. score anchors with both sources and the other groups with the world model, the
   two sources concurrently, since real execution is the slow one;
3. apply the corrections (`correct_step`): out-of-sample residuals of each anchor
   group to the weighter, the pairs to the debiaser (which may refit), every
   world-model reward through the map, and the fallback rule's recommendation
   adopted: the next step's anchor fraction, a floor under the anchor weight, and the
   world-model groups' weight (0 once fallen back: plain GRPO on real runs).

The paper's ablations switch one correction off: ``debias=False`` keeps the raw
predictions (no map; the anchor weight then comes from residuals of the raw
predictions), ``denoise=False`` puts 1 in place of the weighter's anchor weight. Each
ablation switches off only its own correction: the debiaser and the weighter still
measure (their signals feed the fallback rule), and the fallback rule still sets the
anchor fraction, the floor under the anchor weight and the world-model groups' weight.

Anchors are always scored by the world model too, also while fallen back: that is
what lets the rule see the world model recover.

What a group's rewards are: an anchor group's are the real scores; a world-model
group's are the calibrated predictions. A rollout a source could not score is
``None`` in its group and never borrows the other source's number, so a group's
rewards always come from one source. Bad input is contained, never turned into a
NaN reward: an empty group gives an empty reward list, a group of one is scored
normally (its advantage is 0), a world model that returns nothing leaves a
world-model group all ``None`` and gives the corrections no pairs, and a score that
is NaN or infinite (from a misbehaving source) becomes ``None`` with a warning.
Values outside [0, 1] are clipped into it with a warning.

`score(batch)` treats the batch as ONE group and one step. Anchoring is scheduled
over the run (`AnchorScheduler`), so scoring one group per call still runs about the
anchor fraction of the groups for real. A multi-turn step keeps its anchor groups
for all its turns (``turn`` in `score_groups`). Not thread-safe: one trainer drives
one `Corrected`.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from wmrl_envs.corrections import (
    AdaptiveAnchorFraction,
    AnchorScheduler,
    FallbackDecision,
    FallbackRule,
    FallbackState,
    InverseVarianceWeighter,
    OnlineDebiaser,
    StateDictError,
    correct_step,
)
from wmrl_envs.corrections.state import StateReader, state_header
from wmrl_envs.rewards.base import (
    ANCHOR,
    WORLD_MODEL,
    GroupScore,
    RewardSource,
    Score,
)
from wmrl_envs.rewards.observers import Observers

__all__ = ["Corrected"]

logger = logging.getLogger(__name__)

_PARTS = ("debiaser", "weighter", "scheduler", "fallback")


class Corrected:
    """Scores groups: anchors by real execution and the world model, the rest by the calibrated world model.

    >>> source = Corrected(RealExecution(), WorldModel(predictor))  # doctest: +SKIP
    >>> groups = source.score_groups([[Rollout(c, code) for code in group] for group in step_codes])  # doctest: +SKIP
    >>> [(g.source, g.weight) for g in groups]  # doctest: +SKIP
    [('world_model', 1.0), ('anchor', 2.7), ('world_model', 1.0)]
    """

    name = "corrected"

    def __init__(
        self,
        real: RewardSource,
        world_model: RewardSource,
        debiaser: OnlineDebiaser | None = None,
        weighter: InverseVarianceWeighter | None = None,
        scheduler: AnchorScheduler | None = None,
        fallback: FallbackRule | None = None,
        adaptive: AdaptiveAnchorFraction | None = None,
        seed: int = 0,
        debias: bool = True,
        denoise: bool = True,
    ) -> None:
        for role, source in (("real", real), ("world_model", world_model)):
            if not callable(getattr(source, "score", None)):
                raise TypeError(
                    f"Corrected {role} must be a RewardSource (with score(batch)), got {type(source).__name__}"
                )
        self.real = real
        self.world_model = world_model
        self.debias = bool(debias)
        self.denoise = bool(denoise)
        self.debiaser = debiaser if debiaser is not None else OnlineDebiaser()
        self.weighter = weighter if weighter is not None else InverseVarianceWeighter()
        self.fallback = fallback if fallback is not None else FallbackRule()
        self.adaptive = adaptive
        # Without an explicit scheduler, start at the fraction the fallback rule recommends while healthy.
        self.scheduler = (
            scheduler
            if scheduler is not None
            else AnchorScheduler(fraction=self.fallback.decision.anchor_fraction, seed=seed)
        )
        self._next_step = 0
        self._open_step: tuple[int, int, list[int]] | None = None
        self.observers = Observers()
        """Told about every call to the real and world-model parts (`wmrl_envs.rewards.observers`)."""

    def score(self, batch: Sequence[Any]) -> list[Score | None]:
        """Score `batch` as one group at the next step (an anchor as often as the anchor fraction says)."""
        if not batch:
            return []
        return self.score_groups([batch])[0].scores

    def score_groups(self, groups: Sequence[Sequence[Any]], step: int | None = None, turn: int = 0) -> list[GroupScore]:
        """Score one call's groups; `step` defaults to one past the last step scored (steps must increase).

        A multi-turn step scores each turn's solutions with the same `step` and ``turn = 1, 2, ...`` after
        ``turn = 0``: the groups that were anchors at turn 0 stay anchors (whole groups across all turns, as the
        paper anchors them), and the scheduler counts the step's groups once.
        """
        groups = [_checked_group(group, g) for g, group in enumerate(groups)]
        step, anchor_list = self._anchors_of(len(groups), step, turn)
        anchors = set(anchor_list)
        real, predicted = self._score_both(groups, anchors)

        fraction = self.scheduler.fraction  # the target this call was anchored at, before the fallback's update
        real_values = [[None if r is None else r.value for r in group] for group in real]
        raw = [[None if p is None else p.value for p in group] for group in predicted]
        step_correction = correct_step(
            self.debiaser,
            self.weighter,
            self.fallback,
            raw,
            real_values,
            sorted(anchors),
            debias=self.debias,
            denoise=self.denoise,
        )
        decision, calibrated, fitted = (
            step_correction.decision,
            step_correction.calibrated,
            step_correction.calibrated_by_map,
        )
        self.scheduler.fraction = self._next_fraction(decision, real, predicted)
        anchor_weight = step_correction.anchor_weight

        step_diagnostics = {
            "step": step,
            "turn": turn,
            **step_correction.diagnostics(),
            "corrections": {"debias": self.debias, "denoise": self.denoise},
            "residual_variance": self.weighter.residual_variance,
            "anchor_fraction": fraction,
            "next_anchor_fraction": self.scheduler.fraction,
            "realized_anchor_fraction": self.scheduler.realized_fraction,
            "error_reduction": self.debiaser.error_reduction(),
            "n_pairs": self.debiaser.n_pairs,
            "n_anchor_groups": len(anchors),
        }
        results = []
        for g in range(len(groups)):
            if g in anchors:
                scores = [_anchor_score(r, p, c) for r, p, c in zip(real[g], predicted[g], calibrated[g])]
                source, weight = ANCHOR, anchor_weight
            else:
                scores = [_calibrated_score(p, c, fitted) for p, c in zip(predicted[g], calibrated[g])]
                source, weight = WORLD_MODEL, step_correction.world_model_weight
            rewards = [None if s is None else s.value for s in scores]
            diagnostics = {
                **step_diagnostics,
                "n_unscored": rewards.count(None),
                "world_model_rewards": calibrated[g],
            }
            results.append(GroupScore(rewards, source, weight, scores, diagnostics))
        logger.info("corrected step %d: %s", step, step_diagnostics)
        return results

    def _anchors_of(self, n_groups: int, step: int | None, turn: int) -> tuple[int, list[int]]:
        """The call's step and anchors: chosen by the scheduler at turn 0, those of the open step after."""
        if isinstance(turn, bool) or not isinstance(turn, int) or turn < 0:
            raise ValueError(f"turn must be an int >= 0, got {turn!r}")
        if turn == 0:
            step = self._next_step if step is None else step
            anchors = self.scheduler.choose(n_groups, step)
            self._next_step = step + 1
            self._open_step = (step, n_groups, anchors)
            return step, anchors
        open_step = self._open_step
        if open_step is None or (step is not None and step != open_step[0]) or n_groups != open_step[1]:
            opened = "no step" if open_step is None else f"step {open_step[0]} with {open_step[1]} groups"
            raise ValueError(
                f"turn {turn} continues the step opened at turn 0, which was {opened}; score turn 0 of step "
                f"{step} with these {n_groups} groups first (the same groups, in the same order, every turn)"
            )
        return open_step[0], open_step[2]

    def _score_both(
        self, groups: list[list[Any]], anchors: set[int]
    ) -> tuple[list[list[Score | None]], list[list[Score | None]]]:
        """Real scores of anchor groups (empty lists elsewhere) and world-model scores of all groups, concurrently."""
        anchor_batch = [r for g in sorted(anchors) for r in groups[g]]
        all_batch = [r for group in groups for r in group]
        with ThreadPoolExecutor(max_workers=2) as pool:
            real_future = pool.submit(_score_with, self.real, anchor_batch, "real", self.observers)
            predicted_flat = _score_with(self.world_model, all_batch, "world_model", self.observers)
            real_flat = real_future.result()
        real_iter, predicted_iter = iter(real_flat), iter(predicted_flat)
        real = [[next(real_iter) for _ in group] if g in anchors else [] for g, group in enumerate(groups)]
        predicted = [[next(predicted_iter) for _ in group] for group in groups]
        return real, predicted

    def _next_fraction(
        self, decision: FallbackDecision, real: list[list[Score | None]], predicted: list[list[Score | None]]
    ) -> float:
        """The fallback's recommended fraction, or with `adaptive` the square-root allocation from noise and costs."""
        if self.adaptive is None:
            return decision.anchor_fraction
        self.adaptive.observe_costs(_mean_cost(real), _mean_cost(predicted))
        healthy = decision.state is FallbackState.HEALTHY
        return self.adaptive.fraction(self.weighter.residual_variance, decision.anchor_fraction, healthy)

    def diagnostics(self) -> dict[str, Any]:
        """What every correction knows now, for logs."""
        return {
            "next_step": self._next_step,
            "adaptive": None if self.adaptive is None else self.adaptive.diagnostics(),
            "debiaser": self.debiaser.diagnostics(),
            "weighter": self.weighter.diagnostics(),
            "scheduler": self.scheduler.diagnostics(),
            "fallback": self.fallback.diagnostics(),
        }

    def state_dict(self) -> dict[str, Any]:
        """The full state (step counter and every correction's state) as a JSON-serialisable dict."""
        state = {**state_header(type(self).__name__), "next_step": self._next_step}
        state["open_step"] = None if self._open_step is None else [*self._open_step[:2], list(self._open_step[2])]
        for part in _PARTS:
            state[part] = getattr(self, part).state_dict()
        state["adaptive"] = None if self.adaptive is None else self.adaptive.state_dict()
        return state

    def load_state_dict(self, state: Any) -> None:
        """Restore a `state_dict`; raises StateDictError naming the bad key, changing nothing, if it is corrupt."""
        kind = type(self).__name__
        read = StateReader(state, kind)
        next_step = read.integer("next_step", minimum=0)
        open_step = _open_step(state.get("open_step"), kind)  # absent in states saved before turns shared anchors
        parts = {part: read.mapping(part) for part in _PARTS}
        for part, sub_state in parts.items():
            try:  # a throwaway copy checks the whole state before anything is assigned
                type(getattr(self, part)).from_state_dict(sub_state)
            except StateDictError as err:
                raise StateDictError(f"{kind} state: key {part!r} is invalid: {err}") from err
        adaptive_state = state.get("adaptive")  # absent in states saved before the option existed: it starts afresh
        if self.adaptive is not None and adaptive_state is not None:
            try:
                AdaptiveAnchorFraction.from_state_dict(adaptive_state)
            except StateDictError as err:
                raise StateDictError(f"{kind} state: key 'adaptive' is invalid: {err}") from err
        last_step = parts["scheduler"].get("last_step")
        if last_step is not None and next_step <= last_step:
            raise StateDictError(f"{kind} state: key 'next_step' ({next_step}) must exceed the scheduler's last_step")
        for part, sub_state in parts.items():
            getattr(self, part).load_state_dict(sub_state)
        if self.adaptive is not None and adaptive_state is not None:
            self.adaptive.load_state_dict(adaptive_state)
        self._next_step = next_step
        self._open_step = open_step


def _mean_cost(groups: list[list[Score | None]]) -> float | None:
    """Mean seconds per scored rollout that a source reported (`Score.cost_s`); None when it scored nothing."""
    costs = [score.cost_s for group in groups for score in group if score is not None]
    return sum(costs) / len(costs) if costs else None


def _open_step(value: Any, kind: str) -> tuple[int, int, list[int]] | None:
    """The saved open step ``[step, n_groups, anchors]``, checked."""
    if value is None:
        return None
    ok = isinstance(value, list) and len(value) == 3 and isinstance(value[2], list)
    ints = ok and all(not isinstance(v, bool) and isinstance(v, int) and v >= 0 for v in [*value[:2], *value[2]])
    if not ints or any(a >= value[1] for a in value[2]):
        raise StateDictError(f"{kind} state: key 'open_step' must be null or [step, n_groups, [anchor indices]]")
    return value[0], value[1], list(value[2])


def _checked_group(group: Sequence[Any], index: int) -> list[Any]:
    """The group as a list; what kind of rollout its items are is for the two sources to check."""
    if not isinstance(group, Sequence) or isinstance(group, (str, bytes)):
        raise TypeError(f"group {index} must be a sequence of rollouts, got a single {type(group).__name__}")
    items = list(group)
    for i, item in enumerate(items):
        if item is None or isinstance(item, (str, bytes, Sequence)):
            raise TypeError(
                f"group {index} item {i} must be one rollout (a Rollout, or an EpisodeRollout for LIBERO), "
                f"got {type(item).__name__}"
            )
    return items


def _score_with(source: RewardSource[Any], batch: list[Any], role: str, observers: Observers) -> list[Score | None]:
    """`source.score(batch)`, reported and checked: one entry per rollout; NaN/inf become None, clipped to [0, 1]."""
    if not batch:
        return []
    began = time.perf_counter()
    scores = list(source.score(batch))
    observers.report(scores, time.perf_counter() - began)
    if len(scores) != len(batch):
        raise ValueError(
            f"the {role} reward source {type(source).__name__} returned {len(scores)} scores for {len(batch)} "
            f"rollouts; "
            f"a RewardSource must return one Score or None per rollout"
        )
    return [_sanitised(score, role) for score in scores]


def _sanitised(score: Score | None, role: str) -> Score | None:
    if score is None:
        return None
    value = score.value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        logger.warning("the %s reward source gave a non-finite score %r; treated as could-not-score", role, value)
        return None
    if not 0.0 <= value <= 1.0:
        logger.warning("the %s reward source gave %r outside [0, 1]; clipped", role, value)
        return dataclasses.replace(score, value=min(max(float(value), 0.0), 1.0))
    return score


def _anchor_score(real: Score | None, predicted: Score | None, calibrated: float | None) -> Score | None:
    if real is None:
        return None
    detail = {**real.detail, "world_model_value": None if predicted is None else predicted.value}
    return dataclasses.replace(real, detail={**detail, "calibrated_world_model_value": calibrated})


def _calibrated_score(predicted: Score | None, calibrated: float | None, fitted: bool) -> Score | None:
    if predicted is None or calibrated is None:
        return None
    detail = {**predicted.detail, "uncalibrated_value": predicted.value, "calibrated": fitted}
    return dataclasses.replace(predicted, value=calibrated, detail=detail)
