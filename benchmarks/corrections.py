"""Do the corrections do what the theory says? A controlled GRPO experiment with known ground truth.

WMRL's theory models a world model's reward as the real reward plus a bounded bias
plus zero-mean noise: the bias leaves a convergence floor of order B^2, the noise
inflates the variance term by a factor of order (1 + sigma^2). Online Debiasing
(`OnlineDebiaser`) targets the first, Inverse-Variance Denoising
(`InverseVarianceWeighter`) the second. This script trains a small numpy policy
with GRPO on a synthetic task family (`_synthetic_policy.py`) where the real
reward, the world model and the best reachable reward are all known exactly, and
measures what each correction buys.

Design: making bias and noise matter
------------------------------------
GRPO standardises rewards within each group, so an affine error cancels exactly.
A strictly monotone distortion ``g(r)`` keeps every within-group ranking, and if
groups held only two distinct rewards, standardisation would reduce them to ranks
and any monotone ``g`` would cancel too. Two choices make the distortion count:

1. **Continuous solutions, so groups hold G distinct rewards.** The policy is a
   Gaussian over a continuous solution space with a *fixed* exploration scale;
   a group's advantages then depend on the spacing of its rewards, not only
   their order, and the policy's fixed point is (up to per-group scaling) the
   maximiser of the expected reward it is trained on.
2. **A real reward with a cliff next to its peak.** The best solutions sit right
   at the edge of a cliff ("the most aggressive learning rate that does not
   diverge"). A policy that must explore keeps its mean a margin back from the
   edge, and the size of that margin is a trade-off between the gain near the
   top and the rollouts lost past the edge. A convex world model,
   ``p = r^(1 + bias)``, stretches the top of the reward scale: it over-rates
   near-best solutions relative to good ones, so a policy trained on it is
   risk-seeking and parks closer to the cliff, losing real reward no matter how
   long it trains. That is a bias floor, and one that a monotone map can undo:
   the isotonic map predicted -> real restores the spacing.

Why not (only) a nuisance-feature bias, e.g. a world model over-rating "long code"?
Because the debiaser sees nothing but the prediction: conditional on ``p``, a bias
carried by a feature it never sees is invisible to any map ``p -> r``, and a
monotone map keeps exactly the within-group rankings the nuisance corrupted. That
bias is outside what Online Debiasing claims to fix; only the real anchor groups
push back against it. The world model here can add it (``--nuisance``, off by
default) to show that limit, but the default measures the bias the method targets.

Noise is zero-mean Gaussian on every prediction (``--noise``). It reorders close
solutions within a group at random and, through the group's standard deviation,
shrinks the real signal in every world-model advantage: slower, noisier learning.
With a constant step size that shows in the learning curve (reported as the gap
averaged over training) more than in the final gap, so both are reported, and
extra runs switch one error source off at a time to show which one a gap is from.

Two subtleties the numbers carry:

- The isotonic map estimates E[r | p] (calibration), while an unbiased gradient
  needs E[calibrated | r] to be affine in r. Without noise both hold and the map
  undoes the distortion exactly. With noise added *after* a distortion that
  squashes part of the scale, the squashed part cannot be recovered from p, the
  map's regression towards the mean is non-affine, and part of the bias remains.
- The theory's variance model, a world-model group's gradient variance being
  ``(1 + c s^2)`` times an anchor group's, assumes noise adds variance. GRPO's
  standardisation keeps every group's advantages at unit scale, so noise instead
  *replaces* signal (a world-model group estimates about alpha times the
  gradient, alpha < 1). The variance table measures both the raw variances and
  alpha, and the mean squared error of the fused estimator against the expected
  real-reward gradient, which is what the weighting should lower.

Regimes (same steps, groups, group size, tasks and random draws per seed)
-------------------------------------------------------------------------
- ``real``: every group scored by real execution (the ceiling; the most real evaluations).
- ``wm_only``: every group scored by the raw world model (no real evaluation).
- ``debias``: ~10% anchor groups (real and world model, trained on their real
  rewards); world-model rewards pass through the isotonic map; the weighter's
  anchor weight replaced by 1.
- ``denoise``: the same anchors, weighted ``1 + c s^2`` from out-of-sample residuals
  of the raw predictions; world-model rewards raw.
- ``wmrl``: both. All three run the library's own step (`correct_step`: residuals
  out of sample, map, `FallbackRule`) and fuse groups as the trainer's loss does
  (`normalised_weights`), so the ablations differ from wmrl only in the correction
  they switch off.
- ``real_budget``: real execution only, with exactly the real evaluations wmrl
  spent (each step, as many groups as wmrl had anchors that step).

Also reported: the calibration error of the isotonic map against the number of
anchor pairs (with a log-log slope), and the measured variance of the fused
gradient estimator, weighted against unweighted, next to what inverse-variance
weighting predicts.

    python benchmarks/corrections.py                  # default run, writes benchmarks/results/corrections.json
    python benchmarks/corrections.py --quick --out /tmp/corrections.json
"""

from __future__ import annotations

import os
import sys

# Single-threaded BLAS before numpy loads: the run parallelises over seeds, not inside matrix products.
for _var in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "BLIS_NUM_THREADS",
):
    os.environ[_var] = "1"

if not sys.stdout.isatty():
    os.environ.setdefault("COLUMNS", "200")  # rich wraps tables at 80 columns when writing to a file or pipe

import argparse
import dataclasses
import itertools
import json
import logging
import math
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# Run as a script, this folder is on sys.path and the helper imports by its own name.
from _synthetic_policy import TaskFamily, WorldModel
from rich.markup import escape
from scipy import stats

from wmrl_envs.console import note, table
from wmrl_envs.corrections import (
    AnchorScheduler,
    FallbackRule,
    InverseVarianceWeighter,
    OnlineDebiaser,
    correct_step,
    normalised_weights,
)
from wmrl_envs.machine import machine_facts

RESULTS = Path(__file__).resolve().parent / "results" / "corrections.json"

REGIMES = ("real", "wm_only", "debias", "denoise", "wmrl", "real_budget")
PAPER_ORDER = ("wmrl", "debias", "denoise", "wm_only")
"""The paper's ablation, best first: both > debiasing only > denoising only > world model only."""
INGREDIENTS = {
    "wm_only[bias only]": ("wm_only", True, False),
    "wm_only[noise only]": ("wm_only", False, True),
    "debias[bias only]": ("debias", True, False),
}
"""Extra runs with one error source of the world model switched off: does each matter on its own, and is
what debiasing leaves behind due to the noise?"""


@dataclass(frozen=True)
class Config:
    """Everything one run depends on; written into the results file."""

    seeds: int = 20
    """Independent seeds (each draws its own task family instance, A, and all random draws)."""
    steps: int = 400
    """Policy updates per regime."""
    groups: int = 16
    """Groups (tasks) per step."""
    group_size: int = 8
    """Rollouts per group (GRPO's G)."""
    lr: float = 0.05
    """SGD step size on the policy's mean weights (plain SGD, as in the theory's bounds)."""
    anchor_fraction: float = 0.1
    """Target share of anchor groups (the paper's ~10%)."""
    bias: float = 2.0
    """World model's distortion: predictions ``r^(1 + bias)``."""
    noise: float = 0.15
    """Standard deviation of the world model's zero-mean noise (rewards live in [0, 1])."""
    nuisance: float = 0.0
    """Over-rating of the `length` knob, a bias the isotonic map cannot see (0 = off)."""
    eval_every: int = 20
    """Steps between exact evaluations of the policy's expected real reward (the learning curve)."""
    eval_contexts: int = 2048
    """Tasks averaged over in each evaluation (the expectation over a task's rollouts is exact)."""
    calibration_pairs: tuple[int, ...] = (32, 64, 128, 256, 512, 1024, 2048, 4096)
    """Anchor-pair counts at which the isotonic map's calibration error is measured."""
    calibration_reps: int = 4
    """Independent fits per pair count and seed."""
    calibration_fresh: int = 20000
    """Fresh rollouts on which calibration error is measured."""
    variance_replicates: int = 2000
    """Independent steps drawn to measure the fused estimator's variance."""
    variance_noises: tuple[float, ...] = (0.02, 0.08, 0.15, 0.3, 0.6)
    """World-model noise levels over which the fused variance is measured (V_WM/V_E across a range)."""
    workers: int = 2
    """Processes running seeds in parallel."""
    family: TaskFamily = field(default_factory=TaskFamily)
    """The synthetic task family (see `_synthetic_policy.py`)."""

    @property
    def world_model(self) -> WorldModel:
        """The world model these settings describe."""
        return WorldModel(bias=self.bias, noise=self.noise, nuisance=self.nuisance)


QUICK = {
    "seeds": 2,
    "steps": 40,
    "eval_every": 10,
    "eval_contexts": 256,
    "calibration_pairs": (32, 128, 512),
    "calibration_reps": 1,
    "calibration_fresh": 2000,
    "variance_replicates": 400,
    "variance_noises": (0.02, 0.3, 0.8),
}
"""Overrides for --quick: a smoke test of every code path in seconds, not a measurement."""


# --- GRPO pieces ---------------------------------------------------------------------------------


def group_advantages(rewards: np.ndarray) -> np.ndarray:
    """GRPO's group-relative advantages ``(r - mean) / std`` per row; 0 for a group whose rewards are all equal."""
    centred = rewards - rewards.mean(axis=-1, keepdims=True)
    std = rewards.std(axis=-1, keepdims=True)
    return np.divide(centred, std, out=np.zeros_like(centred), where=std > 1e-12)


def group_gradients(advantages: np.ndarray, eps: np.ndarray, contexts: np.ndarray, sigma: float) -> np.ndarray:
    """Per-group policy gradient ``mean_i A_i grad log pi(a_i | x)`` w.r.t. W, flattened: (n_groups, d * m).

    For ``a = W x + sigma * eps`` the score is ``(a - W x) / sigma^2 = eps / sigma`` times ``x``.
    """
    grads = np.einsum("gi,gid,gm->gdm", advantages, eps / sigma, contexts) / advantages.shape[-1]
    return grads.reshape(len(contexts), -1)


def fused_gradient(grads: np.ndarray, weights: np.ndarray, group_size: int) -> np.ndarray:
    """The weighted mean of group gradients, normalised by the total weight exactly as the library's loss is."""
    normalised = np.asarray(normalised_weights([float(w) for w in weights], [group_size] * len(weights)))
    return (normalised[:, None] * grads).mean(axis=0)


@dataclass
class Rollouts:
    """One step's groups: task contexts, exploration draws, real rewards and world-model predictions."""

    contexts: np.ndarray
    eps: np.ndarray
    real: np.ndarray
    predicted: np.ndarray


def rollouts(
    family: TaskFamily,
    world_model: WorldModel,
    weights: np.ndarray,
    solution_map: np.ndarray,
    rng: np.random.Generator,
    n_groups: int,
    group_size: int,
) -> Rollouts:
    """Sample `n_groups` tasks and `group_size` solutions each from the policy; score them both ways."""
    contexts = family.sample_contexts(rng, n_groups)
    eps = rng.standard_normal((n_groups, group_size, family.action_dim))
    standard_noise = rng.standard_normal((n_groups, group_size))
    offsets = (contexts @ (weights - solution_map).T)[:, None, :] + family.exploration * eps
    real = family.real_reward(offsets)
    return Rollouts(contexts, eps, real, world_model.predict_with(real, offsets, family, standard_noise))


# --- training under one regime ------------------------------------------------------------------


def train(
    cfg: Config, regime: str, seed: int, world_model: WorldModel, anchor_plan: list[int] | None = None
) -> dict[str, Any]:
    """Train from W = 0 for `cfg.steps` steps under `regime`; return the gap curve, spend and diagnostics."""
    family = cfg.family
    solution_map = family.sample_solution_map(np.random.default_rng([seed, 0]))
    eval_contexts = family.sample_contexts(np.random.default_rng([seed, 1]), cfg.eval_contexts)
    optimum = family.optimum()
    weights = np.zeros((family.action_dim, family.context_dim))
    corrected = regime in ("debias", "denoise", "wmrl")
    use_map, use_weights = regime in ("debias", "wmrl"), regime in ("denoise", "wmrl")
    scheduler = AnchorScheduler(fraction=cfg.anchor_fraction, seed=seed)
    debiaser, weighter, rule = OnlineDebiaser(), InverseVarianceWeighter(), FallbackRule()
    real_evals = wm_calls = 0
    curve, plan, states = [], [], {}
    for step in range(cfg.steps):
        if step % cfg.eval_every == 0:
            curve.append((step, optimum - family.mean_reward(weights, solution_map, eval_contexts)))
        # Common random numbers: every regime of a seed sees the same tasks and draws at each step.
        rng = np.random.default_rng([seed, 2, step])
        n_groups = cfg.groups if anchor_plan is None else anchor_plan[step]
        batch = rollouts(family, world_model, weights, solution_map, rng, cfg.groups, cfg.group_size)
        batch = Rollouts(*(getattr(batch, f.name)[:n_groups] for f in dataclasses.fields(Rollouts)))
        group_weights = np.ones(n_groups)
        if regime in ("real", "real_budget"):
            rewards = batch.real
            real_evals += batch.real.size
        elif regime == "wm_only":
            rewards = batch.predicted
            wm_calls += batch.predicted.size
        else:
            assert corrected, regime
            anchors = scheduler.choose(n_groups, step)
            plan.append(len(anchors))
            real_evals += len(anchors) * cfg.group_size
            wm_calls += batch.predicted.size
            # The library's own step (out-of-sample residuals, map, fallback), with this regime's corrections.
            step_correction = correct_step(
                debiaser,
                weighter,
                rule,
                batch.predicted.tolist(),
                [batch.real[g].tolist() if g in anchors else [None] * cfg.group_size for g in range(n_groups)],
                anchors,
                debias=use_map,
                denoise=use_weights,
            )
            calibrated = np.asarray(step_correction.calibrated, dtype=np.float64).reshape(batch.predicted.shape)
            anchor_weight, wm_weight = step_correction.anchor_weight, step_correction.world_model_weight
            decision = step_correction.decision
            scheduler.fraction = decision.anchor_fraction
            states[decision.state.value] = states.get(decision.state.value, 0) + 1
            rewards = calibrated.copy()
            rewards[anchors] = batch.real[anchors]  # anchors train on what they really scored
            group_weights[:] = wm_weight
            group_weights[anchors] = anchor_weight
        grads = group_gradients(group_advantages(rewards), batch.eps, batch.contexts, family.exploration)
        weights = weights + cfg.lr * fused_gradient(grads, group_weights, cfg.group_size).reshape(weights.shape)
    final_gap = optimum - family.mean_reward(weights, solution_map, eval_contexts)
    curve.append((cfg.steps, final_gap))
    tail = [gap for step, gap in curve if step >= 0.75 * cfg.steps]
    result: dict[str, Any] = {
        "final_gap": final_gap,
        "tail_gap": float(np.mean(tail)),
        "mean_gap": float(np.mean([gap for _, gap in curve])),
        "real_evals": real_evals,
        "wm_calls": wm_calls,
        "curve": curve,
        "weights": weights.tolist(),
    }
    if corrected:
        result["anchor_plan"] = plan
        result["final_anchor_weight"] = float(anchor_weight)
        result["residual_variance"] = weighter.residual_variance
        result["debiaser"] = debiaser.diagnostics() if use_map else None
        result["fallback_states"] = states or None
    return result


def run_seed(cfg: Config, seed: int) -> dict[str, Any]:
    """All regimes, the ingredient checks and the calibration curve for one seed."""
    world_model = cfg.world_model
    runs = {regime: train(cfg, regime, seed, world_model) for regime in REGIMES if regime != "real_budget"}
    runs["real_budget"] = train(cfg, "real_budget", seed, world_model, anchor_plan=runs["wmrl"]["anchor_plan"])
    for name, (regime, keep_bias, keep_noise) in INGREDIENTS.items():
        partial = dataclasses.replace(
            world_model, bias=world_model.bias if keep_bias else 0.0, noise=world_model.noise if keep_noise else 0.0
        )
        runs[name] = train(cfg, regime, seed, partial)
    return {"seed": seed, "runs": runs, "calibration": calibration_errors(cfg, seed)}


# --- calibration error against anchor pairs -----------------------------------------------------


def calibration_errors(cfg: Config, seed: int) -> dict[str, Any]:
    """MSE of the isotonic map's calibrated predictions vs real on fresh rollouts, per number of anchor pairs.

    Pairs come from the initial policy (a fixed distribution, so only the pair count changes). The excess
    MSE subtracts the error of a map fit on 100k pairs (the irreducible E[Var(r | p)] the noise leaves).
    """
    family, world_model = cfg.family, cfg.world_model
    solution_map = family.sample_solution_map(np.random.default_rng([seed, 0]))
    weights = np.zeros((family.action_dim, family.context_dim))
    rng = np.random.default_rng([seed, 3])

    def pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
        batch = rollouts(family, world_model, weights, solution_map, rng, math.ceil(n / cfg.group_size), cfg.group_size)
        return batch.predicted.ravel()[:n], batch.real.ravel()[:n]

    fresh_p, fresh_r = pairs(cfg.calibration_fresh)
    reference_n = 100_000 if cfg.calibration_fresh >= 10_000 else 10 * cfg.calibration_fresh
    reference = OnlineDebiaser(min_pairs=reference_n)
    reference.add(*pairs(reference_n))
    irreducible = float(np.mean((reference.transform(fresh_p) - fresh_r) ** 2))
    mse = {}
    for n in cfg.calibration_pairs:
        errors = []
        for _ in range(cfg.calibration_reps):
            debiaser = OnlineDebiaser(min_pairs=n)  # fits exactly once, on these n pairs
            debiaser.add(*pairs(n))
            errors.append(float(np.mean((debiaser.transform(fresh_p) - fresh_r) ** 2)))
        mse[n] = float(np.mean(errors))
    return {"mse": mse, "irreducible": irreducible, "raw_mse": float(np.mean((fresh_p - fresh_r) ** 2))}


def loglog_slope(x: list[float], y: list[float]) -> float | None:
    """Least-squares slope of log y on log x; None when fewer than two positive points."""
    points = [(a, b) for a, b in zip(x, y, strict=True) if a > 0 and b > 0]
    if len(points) < 2:
        return None
    return float(np.polyfit(np.log([a for a, _ in points]), np.log([b for _, b in points]), 1)[0])


# --- variance of the fused gradient estimator ---------------------------------------------------


def variance_reduction(cfg: Config, seed: int, weights: np.ndarray, label: str) -> dict[str, Any]:
    """Measured variance of the fused estimator, anchor-weighted vs unweighted, at a fixed policy.

    The map is fit on 4096 pairs and s^2 measured on 512 anchor groups of this policy; then each of
    `variance_replicates` independent steps gets n_a anchor groups (real rewards) and the rest
    calibrated world-model groups. The theory's model: a world-model group's gradient variance is
    (1 + c s^2) times an anchor group's; with weights w_a on anchors and 1 on the rest,
    Var = (n_a w_a^2 V_E + n_wm V_WM) / (n_a w_a + n_wm)^2.
    """
    family, world_model = cfg.family, cfg.world_model
    solution_map = family.sample_solution_map(np.random.default_rng([seed, 0]))
    rng = np.random.default_rng([seed, 4])
    debiaser = OnlineDebiaser(min_pairs=4096)
    fit = rollouts(family, world_model, weights, solution_map, rng, 4096 // cfg.group_size, cfg.group_size)
    debiaser.add(fit.predicted, fit.real)
    weighter = InverseVarianceWeighter(window=512)
    probe = rollouts(family, world_model, weights, solution_map, rng, 512, cfg.group_size)
    for p, r in zip(debiaser.transform(probe.predicted), probe.real, strict=True):
        weighter.observe(p, r)
    s2, anchor_weight = weighter.residual_variance, weighter.anchor_weight
    n_anchor = max(1, round(cfg.anchor_fraction * cfg.groups))
    n_wm = cfg.groups - n_anchor
    steps = rollouts(
        family, world_model, weights, solution_map, rng, cfg.variance_replicates * cfg.groups, cfg.group_size
    )
    real_grads = group_gradients(group_advantages(steps.real), steps.eps, steps.contexts, family.exploration)
    wm_grads = group_gradients(
        group_advantages(debiaser.transform(steps.predicted)), steps.eps, steps.contexts, family.exploration
    )
    var_e = float(np.sum(np.var(real_grads, axis=0)))
    var_wm = float(np.sum(np.var(wm_grads, axis=0)))
    reference = real_grads.mean(axis=0)  # the expected real-reward GRPO gradient at this policy
    # Standardisation keeps every group's advantages at unit scale, so noise does not add variance so much as
    # replace signal: a world-model group estimates about alpha * gradient. Rescaled by 1 / alpha it is an
    # estimate of the same gradient, the quantity the theory's (1 + c s^2) describes.
    alpha = float(wm_grads.mean(axis=0) @ reference / (reference @ reference))
    real_grads = real_grads.reshape(cfg.variance_replicates, cfg.groups, -1)
    wm_grads = wm_grads.reshape(cfg.variance_replicates, cfg.groups, -1)
    # Per step the first n_anchor groups are anchors (real rewards), the rest calibrated world-model groups.
    mixed = np.concatenate([real_grads[:, :n_anchor], wm_grads[:, n_anchor:]], axis=1)

    def fused(w_anchor: float) -> np.ndarray:
        group_weights = np.r_[np.full(n_anchor, w_anchor), np.ones(n_wm)].tolist()
        normalised = np.asarray(normalised_weights(group_weights, [cfg.group_size] * cfg.groups))
        return np.einsum("g,rgk->rk", normalised, mixed) / cfg.groups

    def predicted_variance(w_anchor: float, ratio: float) -> float:  # in units of V_E
        return (n_anchor * w_anchor**2 + n_wm * ratio) / (n_anchor * w_anchor + n_wm) ** 2

    weighted, unweighted = fused(anchor_weight), fused(1.0)
    measured_ratio = var_wm / var_e
    optimal_weight = float(np.clip(measured_ratio, 0.0, None))
    return {
        "policy": label,
        "n_anchor_groups": n_anchor,
        "n_world_model_groups": n_wm,
        "s2": s2,
        "anchor_weight": anchor_weight,
        "per_group_variance_anchor": var_e,
        "per_group_variance_world_model": var_wm,
        "variance_ratio_measured": measured_ratio,
        "variance_ratio_theory": 1.0 + weighter.c * s2,
        "world_model_signal_scale": alpha,
        "variance_ratio_signal_normalised": measured_ratio / alpha**2,
        "fused_variance_weighted": float(np.sum(np.var(weighted, axis=0))),
        "fused_variance_unweighted": float(np.sum(np.var(unweighted, axis=0))),
        "factor_measured": float(np.sum(np.var(weighted, axis=0)) / np.sum(np.var(unweighted, axis=0))),
        "factor_theory": predicted_variance(anchor_weight, 1.0 + weighter.c * s2)
        / predicted_variance(1.0, 1.0 + weighter.c * s2),
        "factor_from_measured_group_variances": predicted_variance(anchor_weight, measured_ratio)
        / predicted_variance(1.0, measured_ratio),
        "optimal_anchor_weight_measured": optimal_weight,
        "factor_at_optimal_weight": predicted_variance(optimal_weight, measured_ratio)
        / predicted_variance(1.0, measured_ratio),
        "fused_mse_weighted": float(np.mean(np.sum((weighted - reference) ** 2, axis=1))),
        "fused_mse_unweighted": float(np.mean(np.sum((unweighted - reference) ** 2, axis=1))),
        "world_model_gradient_bias_sq": float(
            np.sum((wm_grads.reshape(-1, wm_grads.shape[-1]).mean(0) - reference) ** 2)
        ),
        "gradient_norm_sq": float(np.sum(reference**2)),
    }


def variance_sweep(cfg: Config) -> dict[str, Any]:
    """The fused estimator's variance against V_WM/V_E over `variance_noises`, and what of the theory holds.

    Checked per noise level, at the initial policy: the normalised fusion's variance follows the independent-
    groups formula from the measured per-group variances (the algebra of inverse-variance weighting), weighting
    the anchors by the weighter's 1 + c s^2 lowers the fused variance exactly when V_WM/V_E > 1, and how far
    1 + c s^2 is from the measured V_WM/V_E.
    """
    zeros = np.zeros((cfg.family.action_dim, cfg.family.context_dim))
    rows = [
        {"noise": noise, **variance_reduction(dataclasses.replace(cfg, noise=noise), 0, zeros, f"noise {noise}")}
        for noise in cfg.variance_noises
    ]
    algebra = [abs(r["factor_measured"] / r["factor_from_measured_group_variances"] - 1.0) for r in rows]
    return {
        "rows": rows,
        "claims": {
            "fused_variance_follows_the_formula_within": max(algebra),
            "weighting_helps_exactly_when_ratio_above_one": all(
                (r["factor_measured"] < 1.0) == (r["variance_ratio_measured"] > 1.0)
                for r in rows
                if r["anchor_weight"] > 1.0 + 1e-9
            ),
            "theory_over_measured_ratio": [r["variance_ratio_theory"] / r["variance_ratio_measured"] for r in rows],
            "weighting_lowers_the_mse_against_the_real_gradient": [
                r["fused_mse_weighted"] < r["fused_mse_unweighted"] for r in rows
            ],
            "measured_ratio_range": [
                min(r["variance_ratio_measured"] for r in rows),
                max(r["variance_ratio_measured"] for r in rows),
            ],
        },
    }


# --- summary ------------------------------------------------------------------------------------


def mean_std(values: list[float]) -> dict[str, float]:
    """Mean and sample standard deviation (0 for one value)."""
    array = np.asarray(values, dtype=np.float64)
    return {"mean": float(array.mean()), "std": float(array.std(ddof=1)) if len(array) > 1 else 0.0}


def summarise(cfg: Config, per_seed: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-regime statistics, paired differences against wmrl, and the ordering check."""
    names = list(REGIMES) + list(INGREDIENTS)
    regimes = {}
    for name in names:
        runs = [s["runs"][name] for s in per_seed]
        gaps = [r["final_gap"] for r in runs]
        diffs = np.array(gaps) - np.array([s["runs"]["wmrl"]["final_gap"] for s in per_seed])
        curve_steps = [step for step, _ in runs[0]["curve"]]
        entry: dict[str, Any] = {
            "final_gap": mean_std(gaps),
            "final_gap_per_seed": gaps,
            "tail_gap": mean_std([r["tail_gap"] for r in runs]),
            "mean_gap_over_training": mean_std([r["mean_gap"] for r in runs]),
            "gap_minus_wmrl": {
                "mean": float(diffs.mean()),
                "se": float(diffs.std(ddof=1) / math.sqrt(len(diffs))) if len(diffs) > 1 else 0.0,
            },
            "real_evals": mean_std([r["real_evals"] for r in runs]),
            "wm_calls": mean_std([r["wm_calls"] for r in runs]),
            "curve": {
                "steps": curve_steps,
                "gap_mean": np.mean([[g for _, g in r["curve"]] for r in runs], axis=0).tolist(),
            },
        }
        if "final_anchor_weight" in runs[0]:
            entry["final_anchor_weight"] = mean_std([r["final_anchor_weight"] for r in runs])
            entry["residual_variance"] = [r["residual_variance"] for r in runs]
            entry["fallback_states"] = [r["fallback_states"] for r in runs]
            entry["debiaser"] = [r["debiaser"] for r in runs]
        regimes[name] = entry
    observed = sorted(PAPER_ORDER, key=lambda n: regimes[n]["final_gap"]["mean"])
    adjacent = []
    for better, worse in itertools.pairwise(PAPER_ORDER):
        diffs = np.array(regimes[worse]["final_gap_per_seed"]) - np.array(regimes[better]["final_gap_per_seed"])
        se = float(diffs.std(ddof=1) / math.sqrt(len(diffs))) if len(diffs) > 1 else 0.0
        t = float(diffs.mean() / se) if se > 0 else None
        p_value = None if t is None else float(stats.t.sf(t, df=len(diffs) - 1))
        adjacent.append(
            {
                "claim": f"{better} < {worse} (gap)",
                "paired_difference": float(diffs.mean()),
                "se": se,
                "holds": bool(diffs.mean() > 0),
                "t": t,
                "p_value_one_sided": p_value,
                "significant_at_5pct": bool(p_value is not None and p_value < 0.05),
            }
        )
    counts = list(cfg.calibration_pairs)
    mse = [float(np.mean([s["calibration"]["mse"][n] for s in per_seed])) for n in counts]
    irreducible = float(np.mean([s["calibration"]["irreducible"] for s in per_seed]))
    excess = [m - irreducible for m in mse]
    calibration = {
        "pairs": counts,
        "mse": mse,
        "excess_mse": excess,
        "irreducible_mse": irreducible,
        "raw_mse": float(np.mean([s["calibration"]["raw_mse"] for s in per_seed])),
        "slope_mse": loglog_slope(counts, mse),
        "slope_excess_mse": loglog_slope(counts, excess),
        "excess_vanishes": bool(excess[-1] < excess[0] and (loglog_slope(counts, excess) or 0.0) < 0.0),
        "note": "excess MSE = MSE - MSE of a map fit on 100k pairs; isotonic regression's minimax L2 rate is "
        "n^(-2/3), 1/n holds only for a map with finitely many steps",
    }
    return {
        "regimes": regimes,
        "ordering": {
            "paper": list(PAPER_ORDER),
            "observed": observed,
            "matches": observed == list(PAPER_ORDER),
            "adjacent_pairs": adjacent,
            "every_step_significant": all(pair["significant_at_5pct"] for pair in adjacent),
        },
        "calibration": calibration,
    }


def print_report(report: dict[str, Any]) -> None:
    """The three tables, through the project's one place for human output."""
    regimes = report["regimes"]
    rows = []
    for name, entry in regimes.items():
        gap, diff = entry["final_gap"], entry["gap_minus_wmrl"]
        weight = entry.get("final_anchor_weight")
        rows.append(
            {
                "regime": escape(name),  # "[bias only]" would otherwise read as rich markup
                "final gap to optimum (mean ± std)": f"{gap['mean']:.4f} ± {gap['std']:.4f}",
                "gap, last 25% of steps": f"{entry['tail_gap']['mean']:.4f} ± {entry['tail_gap']['std']:.4f}",
                "gap averaged over training": f"{entry['mean_gap_over_training']['mean']:.4f}",
                "gap − wmrl (paired, ± se)": f"{diff['mean']:+.4f} ± {diff['se']:.4f}",
                "real evals": f"{entry['real_evals']['mean']:.0f}",
                "world-model calls": f"{entry['wm_calls']['mean']:.0f}",
                "final anchor weight": "-" if weight is None else f"{weight['mean']:.2f}",
            }
        )
    params = report["parameters"]
    table(
        f"Final true-reward gap (optimum {report['optimum']:.4f}; {params['seeds']} seeds, {params['steps']} steps, "
        f"bias {params['bias']}, noise {params['noise']}, nuisance {params['nuisance']})",
        rows,
    )
    ordering = report["ordering"]
    note(
        f"paper order {' > '.join(ordering['paper'])}; observed {' > '.join(ordering['observed'])}: "
        f"{'matches' if ordering['matches'] else 'differs'}"
    )
    for pair in ordering["adjacent_pairs"]:
        t = "-" if pair["t"] is None else f"{pair['t']:.1f}"
        p = "-" if pair["p_value_one_sided"] is None else f"{pair['p_value_one_sided']:.3f}"
        note(
            f"  {pair['claim']}: paired difference {pair['paired_difference']:+.4f} ± {pair['se']:.4f} (se), "
            f"t = {t}, one-sided p = {p}"
        )
    floors = report["predicted_floors"]
    note(
        f"predicted floor of wm_only (maximiser of E[prediction], ignoring standardisation): "
        f"{floors['wm_only']:.4f}; world model bias bound B = {report['world_model']['sup_bias']:.3f}"
    )
    cal = report["calibration"]
    table(
        "Calibration error of the isotonic map vs anchor pairs (fresh rollouts)",
        [
            {"pairs": n, "MSE": f"{m:.5f}", "excess over 100k-pair map": f"{e:.5f}"}
            for n, m, e in zip(cal["pairs"], cal["mse"], cal["excess_mse"], strict=True)
        ],
    )
    note(
        f"log-log slope: MSE {cal['slope_mse']:.3f}, excess MSE {cal['slope_excess_mse']:.3f} "
        f"(irreducible {cal['irreducible_mse']:.5f}, raw predictions {cal['raw_mse']:.5f})"
    )
    table(
        "Fused gradient estimator: anchor-weighted vs unweighted (trace of covariance)",
        [
            {
                "policy": v["policy"],
                "s²": f"{v['s2']:.3f}",
                "anchor weight": f"{v['anchor_weight']:.2f}",
                "V_WM/V_E measured": f"{v['variance_ratio_measured']:.3f}",
                "WM signal scale α": f"{v['world_model_signal_scale']:.3f}",
                "theory 1+c·s²": f"{v['variance_ratio_theory']:.3f}",
                "factor measured": f"{v['factor_measured']:.3f}",
                "factor theory": f"{v['factor_theory']:.3f}",
                "factor at optimal w": f"{v['factor_at_optimal_weight']:.3f}",
                "MSE weighted/unweighted": f"{v['fused_mse_weighted'] / v['fused_mse_unweighted']:.3f}",
            }
            for v in report["variance_reduction"]
        ],
    )
    sweep = report["variance_sweep"]
    table(
        "Fused variance across world-model noise (initial policy): measured V_WM/V_E against the weighter's 1 + c s²",
        [
            {
                "noise": f"{r['noise']:.2f}",
                "V_WM/V_E measured": f"{r['variance_ratio_measured']:.3f}",
                "1+c·s²": f"{r['variance_ratio_theory']:.3f}",
                "anchor weight": f"{r['anchor_weight']:.2f}",
                "factor measured": f"{r['factor_measured']:.3f}",
                "factor from group variances": f"{r['factor_from_measured_group_variances']:.3f}",
                "factor at optimal w": f"{r['factor_at_optimal_weight']:.3f}",
                "V_WM/V_E ÷ α²": f"{r['variance_ratio_signal_normalised']:.3f}",
                "MSE weighted/unweighted": f"{r['fused_mse_weighted'] / r['fused_mse_unweighted']:.3f}",
            }
            for r in sweep["rows"]
        ],
    )
    note(f"variance claims: {sweep['claims']}")


def parse_args(argv: list[str] | None = None) -> tuple[Config, Path, bool]:
    """CLI flags over `Config` (validated here, once)."""
    defaults = Config()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=None, help=f"seeds (default {defaults.seeds})")
    parser.add_argument("--steps", type=int, default=None, help=f"policy updates per regime (default {defaults.steps})")
    parser.add_argument("--bias", type=float, default=defaults.bias, help="world model predicts r^(1 + bias)")
    parser.add_argument("--noise", type=float, default=defaults.noise, help="std of the world model's noise")
    parser.add_argument(
        "--nuisance",
        type=float,
        default=defaults.nuisance,
        help="world model over-rates the `length` knob by up to this much (a bias no map p->r sees)",
    )
    parser.add_argument("--workers", type=int, default=min(defaults.workers, os.cpu_count() or 1))
    parser.add_argument(
        "--quick", action="store_true", help="smoke test: every code path in seconds, not a measurement"
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"results file (default {RESULTS})")
    args = parser.parse_args(argv)
    overrides: dict[str, Any] = dict(QUICK) if args.quick else {}
    overrides.update({k: v for k in ("seeds", "steps") if (v := getattr(args, k)) is not None})
    cfg = dataclasses.replace(
        defaults, bias=args.bias, noise=args.noise, nuisance=args.nuisance, workers=args.workers, **overrides
    )
    problems = [
        f"--{name} must be >= {low}, got {value}"
        for name, value, low in (("seeds", cfg.seeds, 1), ("steps", cfg.steps, 1), ("workers", cfg.workers, 1))
        if value < low
    ]
    problems += [
        f"--{name} must be >= 0, got {value}"
        for name, value in (("bias", cfg.bias), ("noise", cfg.noise), ("nuisance", cfg.nuisance))
        if not value >= 0
    ]
    if problems:
        parser.error("; ".join(problems))
    return cfg, args.out, args.quick


def main(argv: list[str] | None = None) -> None:
    cfg, out, quick = parse_args(argv)
    # Fallback transitions are counted in the results; the library's warnings would bury the tables.
    logging.getLogger("wmrl_envs.corrections").setLevel(logging.ERROR)
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=cfg.workers) as pool:
        per_seed = list(pool.map(run_seed, [cfg] * cfg.seeds, range(cfg.seeds)))
    report = summarise(cfg, per_seed)
    family, world_model = cfg.family, cfg.world_model
    optimum = family.optimum()
    wm_offset = world_model.best_offset(family)
    seed0 = per_seed[0]["runs"]
    report["variance_reduction"] = [
        variance_reduction(cfg, 0, np.zeros((family.action_dim, family.context_dim)), "initial (W = 0)"),
        variance_reduction(cfg, 0, np.asarray(seed0["wmrl"]["weights"]), "trained (wmrl's final, seed 0)"),
    ]
    report["variance_sweep"] = variance_sweep(cfg)
    report = {
        "benchmark": "corrections",
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": " ".join([Path(sys.argv[0]).name, *(sys.argv[1:] if argv is None else argv)]),
        "quick": quick,
        "machine": machine_facts(libraries=("numpy",)),
        "parameters": {k: v for k, v in dataclasses.asdict(cfg).items() if k != "family"},
        "task_family": dataclasses.asdict(family),
        "world_model": {
            **dataclasses.asdict(world_model),
            "gamma": world_model.gamma,
            "sup_bias": world_model.sup_bias(),
        },
        "optimum": optimum,
        "best_offset": family.best_offset().tolist(),
        "predicted_floors": {
            "note": "gap of the policy maximising the expected reward each regime is trained on, "
            "ignoring per-group standardisation",
            "real": 0.0,
            "wm_only": optimum - float(family.expected_reward(wm_offset)),
            "wm_only_offset": wm_offset.tolist(),
        },
        **report,
    }
    report["runtime_s"] = time.perf_counter() - started
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, default=_json_default) + "\n")
    print_report(report)
    note(f"runtime {report['runtime_s']:.1f} s; wrote {out}")


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


if __name__ == "__main__":
    main()
