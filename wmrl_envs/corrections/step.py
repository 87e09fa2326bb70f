"""One step of the corrections, given the step's scores: the order in which they act is the method.

`Corrected` (the reward source) and ``benchmarks/corrections.py`` (the controlled
experiment) both call `correct_step`, so what is measured is what trains. Given every
group's world-model predictions and the anchor groups' real scores:

1. measure each anchor group's residuals under the map as it stands BEFORE this
   step's pairs (out of sample: raw predictions before the first fit, the current
   map after; with debiasing off, always raw) and give them to the weighter;
2. add the anchor pairs to the debiaser, which may refit its map;
3. calibrate every world-model prediction through the (possibly new) map;
4. if the step had anchor pairs, let the fallback rule judge calibration, ranking
   (RAW predictions against real scores: a monotone map can only tie ranks, and a
   flat map fitted to a backwards world model would hide the very signal) and
   residuals, each with the size of its evidence so that it acts on confidence, not
   on a point estimate; a step without anchors brings no evidence and changes no state;
5. the anchor weight is the weighter's (1 with denoising off), raised to the fallback
   state's floor; the world-model groups' weight is the state's (0 once fallen back).

Predictions and real scores are lists per group with ``None`` for a rollout a source
could not score; only rollouts scored by both make pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from wmrl_envs.corrections.debias import OnlineDebiaser
from wmrl_envs.corrections.denoise import InverseVarianceWeighter
from wmrl_envs.corrections.fallback import FallbackDecision, FallbackRule, rank_evidence

__all__ = ["StepCorrection", "correct_step"]

Scores = Sequence[Sequence[float | None]]


@dataclass(frozen=True)
class StepCorrection:
    """What the corrections decided for one step: calibrated world-model rewards, weights, and why."""

    calibrated: list[list[float | None]]
    """Every group's world-model predictions on the real scale (raw where no map is applied)."""
    anchor_weight: float
    world_model_weight: float
    decision: FallbackDecision
    calibrated_by_map: bool
    """Whether `calibrated` went through a fitted map (False: raw predictions)."""
    rank_correlation: float | None
    anchor_pairs: int
    """(predicted, real) pairs this step's anchors gave."""
    residual_groups: int
    """Anchor groups whose out-of-sample residuals the weighter observed this step."""

    def diagnostics(self) -> dict[str, Any]:
        """The step's decisions as a JSON-serialisable dict, for logs."""
        return {
            "calibrated": self.calibrated_by_map,
            "anchor_weight": self.anchor_weight,
            "world_model_weight": self.world_model_weight,
            "fallback_state": self.decision.state.value,
            "failing": list(self.decision.failing),
            "next_anchor_fraction": self.decision.anchor_fraction,
            "rank_correlation": self.rank_correlation,
            "step_anchor_pairs": self.anchor_pairs,
            "step_residual_groups": self.residual_groups,
        }


def correct_step(
    debiaser: OnlineDebiaser,
    weighter: InverseVarianceWeighter,
    fallback: FallbackRule,
    predicted: Scores,
    real: Scores,
    anchors: Sequence[int],
    *,
    debias: bool = True,
    denoise: bool = True,
) -> StepCorrection:
    """Apply one step's anchors to the corrections (see the module docstring); `real` is read for anchors only."""
    if len(predicted) != len(real):
        raise ValueError(f"correct_step needs real scores for every group, got {len(predicted)} and {len(real)}")
    anchors = sorted(set(anchors))
    paired = [_paired(predicted[g], real[g]) for g in anchors]
    use_map = debias and debiaser.is_fitted
    residual_groups = 0
    for p, r in paired:
        out_of_sample = [float(v) for v in debiaser.transform(p)] if use_map and p else p
        residual_groups += weighter.observe(out_of_sample, r)
    pairs = [(x, y) for p, r in paired for x, y in zip(p, r, strict=True)]
    if pairs:
        debiaser.add([x for x, _ in pairs], [y for _, y in pairs])
    fitted = debias and debiaser.is_fitted
    calibrated = [[None if v is None else _calibrate(debiaser, v, fitted) for v in group] for group in predicted]
    evidence = rank_evidence(paired)
    rank = None if evidence is None else evidence[0]
    if pairs:
        decision = fallback.update(
            error_reduction=debiaser.error_reduction(),
            rank_correlation=rank,
            residual_variance=weighter.residual_variance,
            error_reduction_se=debiaser.error_reduction_se(),
            rank_variance=None if evidence is None else evidence[1],
            residual_dof=weighter.residual_dof,
        )
    else:
        decision = fallback.decision
    anchor_weight = decision.anchor_weight(weighter.anchor_weight if denoise else 1.0)
    return StepCorrection(
        calibrated, anchor_weight, decision.world_model_weight, decision, fitted, rank, len(pairs), residual_groups
    )


def _calibrate(debiaser: OnlineDebiaser, value: float, fitted: bool) -> float:
    return float(debiaser.transform(value)) if fitted else float(value)


def _paired(predicted: Sequence[float | None], real: Sequence[float | None]) -> tuple[list[float], list[float]]:
    """Predictions and real scores of the rollouts both sources scored."""
    if len(predicted) != len(real):
        raise ValueError(f"an anchor group has {len(predicted)} predictions and {len(real)} real scores")
    both = [(float(p), float(r)) for p, r in zip(predicted, real, strict=True) if p is not None and r is not None]
    return [p for p, _ in both], [r for _, r in both]
