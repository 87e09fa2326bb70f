"""Corrected on real rollouts: programs of varied quality for a pool competition, really executed and graded.

The world model is a deterministic stand-in defined here (it reads the code for telltale edits);
Corrected, not the predictor, is under test.
"""

from __future__ import annotations

import math
import time

import pytest
from wmrl_tasks.mledojo.pool.baselines import baseline_code
from wmrl_tasks.mledojo.readers import read_competition

from wmrl_envs.competition import Competition
from wmrl_envs.corrections import AnchorScheduler, OnlineDebiaser
from wmrl_envs.rewards import (
    ANCHOR,
    Corrected,
    RealExecution,
    Rollout,
    Score,
    WorldModel,
    group_advantages,
)
from wmrl_envs.sandbox import Limits
from wmrl_envs.world_models import Prediction

TASK = "telco-customer-churn"
PREDICT = 'churn = model.predict_proba(X.loc["test"])[:, 1]'


def _variants() -> dict[str, str]:
    """Real programs from strong to broken, made by editing the shipped baseline."""
    base = baseline_code(TASK)
    assert PREDICT in base and "X = pd.get_dummies(both, dtype=float)" in base
    return {
        "baseline": base,
        "no_log_tenure": base.replace('both["log_tenure"] = np.log1p(both["tenure"])', ""),
        "tenure_only": base.replace("X = pd.get_dummies(both, dtype=float)", 'X = both[["tenure"]].astype(float)'),
        "constant": base.replace(PREDICT, "churn = np.full(len(test), 0.5)"),
        "inverted": base.replace(PREDICT, f"{PREDICT}\nchurn = 1.0 - churn"),
        "crash": "raise SystemExit(3)\n" + base,
        "exotic": "# exotic\n" + base,
    }


class TelltalePredictor:
    """Guesses a position from edits it recognises; no answer for code marked exotic."""

    def predict(self, competition: Competition, code: str) -> Prediction | None:
        if "# exotic" in code:
            return None
        if "raise SystemExit" in code:
            return Prediction(status="crashes")
        position = 0.1
        position += 0.3 * ("get_dummies" in code) + 0.2 * ("log_tenure" in code)
        position += 0.3 * ("np.full" not in code) - 0.2 * ("1.0 - churn" in code)
        return Prediction(position=position**2, raw=f"{position:.2f}")


class Memo:
    """Real execution that runs each distinct program once and records which programs it ran."""

    name = "real"

    def __init__(self, inner: RealExecution) -> None:
        self.inner, self.cache, self.ran = inner, {}, []

    def score(self, batch: list[Rollout]) -> list[Score | None]:
        todo = list({r.code: r for r in batch if r.code not in self.cache}.values())
        for rollout, score in zip(todo, self.inner.score(todo)):
            self.cache[rollout.code] = score
            self.ran.append(rollout.code)
        return [self.cache[r.code] for r in batch]


@pytest.mark.slow
def test_corrected_on_real_rollouts_anchors_real_scores_bounded_weights_none_excluded(pool_root) -> None:
    competition = read_competition(pool_root / TASK)
    variants = _variants()
    names = list(variants)
    real = Memo(RealExecution(limits=Limits(wall_time_s=120), workers=2))
    corrected = Corrected(
        real,
        WorldModel(TelltalePredictor()),
        debiaser=OnlineDebiaser(min_pairs=6, refit_every=4),
        scheduler=AnchorScheduler(fraction=0.4, seed=0),
    )
    seen_anchor_codes: set[str] = set()
    for step in range(4):
        # Five groups of four; each group mixes quality levels, shifted per group and step.
        groups_names = [[names[(step + g + k * 2) % len(names)] for k in range(4)] for g in range(5)]
        groups = [[Rollout(competition, variants[n]) for n in group] for group in groups_names]
        scored = corrected.score_groups(groups)
        for group_names, group_score in zip(groups_names, scored):
            if group_score.source == ANCHOR:
                seen_anchor_codes.update(variants[n] for n in group_names)
                assert 1.0 <= group_score.weight <= 4.0
                for name, score in zip(group_names, group_score.scores):
                    assert score.source == "real" and score.outcome is not None, name
                    assert score.value == score.outcome.position
            else:
                assert group_score.weight in (0.0, 1.0)
                for name, reward in zip(group_names, group_score.rewards):
                    assert (reward is None) == (name == "exotic")
        for group_score, advantages in zip(scored, group_advantages(scored)):
            for reward, advantage in zip(group_score.rewards, advantages):
                assert (advantage is None) == (reward is None)
                assert advantage is None or math.isfinite(advantage)

    assert set(real.ran) <= seen_anchor_codes, "only anchor rollouts are executed"
    by_name = {n: real.cache[code].value for n, code in variants.items() if code in real.cache}
    assert by_name.get("crash", 0.0) == 0.0
    if "baseline" in by_name and "inverted" in by_name:
        assert by_name["baseline"] > by_name["inverted"]
    last = scored[0].diagnostics
    assert last["calibrated"] and last["n_pairs"] >= 6
    assert last["residual_variance"] is not None and 0.0 < last["realized_anchor_fraction"] <= 1.0


class Timed:
    """Records when a source's scoring call started and ended (the source itself runs unchanged)."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.calls = inner, inner.name, []

    def score(self, batch):
        began = time.monotonic()
        scores = self.inner.score(batch)
        self.calls.append((began, time.monotonic()))
        return scores


@pytest.mark.slow
def test_world_model_predictions_do_not_wait_for_the_anchor_groups_real_runs(pool_root) -> None:
    competition = read_competition(pool_root / TASK)
    slow = "import time\ntime.sleep(3)\n" + baseline_code(TASK)
    real = Timed(RealExecution(limits=Limits(wall_time_s=120), workers=2))
    world_model = Timed(WorldModel(TelltalePredictor()))
    corrected = Corrected(real, world_model, scheduler=AnchorScheduler(fraction=0.1, seed=0))
    groups = [[Rollout(competition, slow)] * 2 for _ in range(4)]
    scored = corrected.score_groups(groups)
    assert sum(g.source == ANCHOR for g in scored) == 1
    (real_start, real_end), (wm_start, wm_end) = real.calls[0], world_model.calls[0]
    assert wm_start < real_end and wm_end < real_end, "the world model's scoring overlapped the anchor runs"
    assert real_end - real_start >= 3.0, "the anchor runs really executed (each sleeps 3 s)"
