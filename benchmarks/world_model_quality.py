"""How well does the cheap-execution proxy predict real execution, and what does it cost?

For every pool competition the proxy covers, the shipped baseline and degraded variants of it
are run twice: for real (sandbox on the full public data, graded on the private answers) and
through `CheapExecutionProxy` (sandbox on a subsample, graded on a held-back public slice).
The variants span the quality range a policy under training produces:

- ``baseline``: the shipped solution;
- ``less_data``: the baseline trained on 10% of the training rows (a weaker model of the same kind);
- ``shuffled_half``: the baseline's predictions with half the rows permuted among themselves
  (a misaligned submission, partly right);
- ``prior``: the class prior / target mean for every row, no model at all;
- ``crash``: the baseline with an exception on its first line (status check only).

Reported per competition and overall: Spearman rank correlation of predicted vs real position
(over the valid-or-not outcomes, crashes scoring 0 on both sides), mean absolute error of the
position, status agreement, and the cost fraction (proxy wall seconds, all included, over the
real run's wall seconds) of the solutions that ran to a valid submission.

    python benchmarks/world_model_quality.py [--ids ...] [--workers 2] [--out benchmarks/results/world_model_quality.json]
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from wmrl_envs.competition import Competition
from wmrl_envs.console import note, table, track
from wmrl_envs.grading import Grader
from wmrl_envs.outcome import Outcome, execute_and_grade
from wmrl_envs.sandbox import Limits, Status, make_executor
from wmrl_envs.world_models import Prediction, PredictorError
from wmrl_envs.world_models.proxy import CheapExecutionProxy, proxy_record
from wmrl_envs.world_models.proxy_split import ProxySplit
from wmrl_tasks.mledojo.pool import POOL_IDS, build_pool
from wmrl_tasks.mledojo.pool.variants import VARIANTS, solution_variants
from wmrl_tasks.mledojo.readers import read_competition

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "benchmarks" / "results" / "world_model_quality.json"


# --- running --------------------------------------------------------------------------------


def real_status(outcome: Outcome) -> str:
    """The real outcome in the predictor's status words."""
    if outcome.execution.status is not Status.OK:
        return "crashes"
    return "valid" if outcome.grade.valid else "no_submission"


def run_pairs(
    items: list[tuple[Competition, str, str]], proxy: CheapExecutionProxy, executor, limits: Limits, workers: int
) -> list[tuple[Outcome, Prediction | None]]:
    """Run every (competition, variant, code) item for real and then through the proxy, `workers` items at a time.

    The two runs of an item are back to back in one worker, so both see the same load on a shared machine.
    """
    grader = Grader()

    def one(item: tuple[Competition, str, str]) -> tuple[Outcome, Prediction | None]:
        competition, _, code = item
        workdir = Path(tempfile.mkdtemp(prefix="wmrl-bench-real-"))
        try:
            outcome = execute_and_grade(competition, code, executor, limits, workdir, grader)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        if outcome.execution.status is Status.OK:
            proxy.record_full_run(competition.id, outcome.execution.wall_s, code)
        try:
            return outcome, proxy.predict(competition, code)
        except PredictorError as err:
            note(f"proxy could not predict {competition.id}: {err}")
            return outcome, None

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(track(pool.map(one, items), len(items), "real + proxy runs"))


def _spearman(predicted: list[float], real: list[float]) -> float | None:
    if len(predicted) < 3 or len(set(predicted)) < 2 or len(set(real)) < 2:
        return None
    rho = spearmanr(predicted, real).statistic
    return None if not math.isfinite(rho) else float(rho)


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Spearman, position MAE, status agreement and cost fraction over some item rows."""
    scored = [r for r in rows if r["predicted_position"] is not None]
    predicted = [r["predicted_position"] for r in scored]
    real = [r["real_position"] for r in scored]
    fractions = [r["cost_fraction"] for r in rows if r["cost_fraction"] is not None]
    exec_fractions = [r["exec_fraction"] for r in rows if r["exec_fraction"] is not None]
    spreads = [r["predicted_sd"] for r in rows if r["predicted_sd"] is not None]
    return {
        "n": len(rows),
        "n_scored": len(scored),
        "spearman": _spearman(predicted, real),
        "position_mae": float(np.mean(np.abs(np.subtract(predicted, real)))) if scored else None,
        "position_bias": float(np.mean(np.subtract(predicted, real))) if scored else None,
        "status_accuracy": float(np.mean([r["predicted_status"] == r["real_status"] for r in rows])) if rows else None,
        "mean_cost_fraction": float(np.mean(fractions)) if fractions else None,
        "median_cost_fraction": float(np.median(fractions)) if fractions else None,
        "mean_exec_fraction": float(np.mean(exec_fractions)) if exec_fractions else None,
        "mean_position_sd": float(np.mean(spreads)) if spreads else None,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", nargs="*", default=list(POOL_IDS), help="pool competitions to include")
    parser.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=VARIANTS, help="solutions per task")
    parser.add_argument("--workers", type=int, default=2, help="concurrent sandbox runs (real and proxy alike)")
    parser.add_argument("--train-fraction", type=float, default=ProxySplit.train_fraction)
    parser.add_argument("--val-fraction", type=float, default=ProxySplit.val_fraction)
    parser.add_argument("--seed", type=int, default=0, help="seed of the proxy's row split")
    parser.add_argument("--wall-time", type=float, default=300.0, help="wall-time limit of one run (seconds)")
    parser.add_argument("--root", type=Path, default=None, help="pool root (default: the pool's cache)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)

    started = time.perf_counter()
    root = build_pool(args.root, ids=args.ids)
    executor = make_executor("auto")
    limits = Limits(wall_time_s=args.wall_time)
    split = ProxySplit(train_fraction=args.train_fraction, val_fraction=args.val_fraction, seed=args.seed)
    proxy = CheapExecutionProxy(executor=executor, limits=limits, split=split)

    competitions = [read_competition(root / cid) for cid in args.ids]
    uncovered = {c.id: proxy.unsupported_reason(c) for c in competitions if proxy.proxy_competition(c) is None}
    covered = [c for c in competitions if c.id not in uncovered]
    items = [(c, name, code) for c in covered for name, code in solution_variants(c, args.variants).items()]
    note(f"{len(covered)} competitions covered, {len(uncovered)} not; {len(items)} solutions")

    pairs = run_pairs(items, proxy, executor, limits, args.workers)
    outcomes = [outcome for outcome, _ in pairs]
    predictions = [prediction for _, prediction in pairs]

    rows: list[dict[str, Any]] = []
    for (competition, name, _), outcome, prediction in zip(items, outcomes, predictions, strict=True):
        record = proxy_record(prediction) if prediction is not None else {}
        valid_both = prediction is not None and prediction.status.value == "valid" and outcome.grade.valid
        if prediction is None:
            predicted_position = None
        elif prediction.status.value == "valid":
            predicted_position = prediction.position
        else:
            predicted_position = 0.0
        proxy_exec = (record.get("exec") or {}).get("wall_s")
        rows.append(
            {
                "competition": competition.id,
                "variant": name,
                "real_status": real_status(outcome),
                "real_position": outcome.position,
                "real_score": outcome.grade.score,
                "predicted_status": None if prediction is None else prediction.status.value,
                "predicted_position": predicted_position,
                "proxy_val_score": record.get("val_score"),
                "predicted_sd": None if prediction is None else prediction.uncertainty,
                "real_wall_s": round(outcome.execution.wall_s, 3),
                "proxy_cost_s": None if prediction is None else round(prediction.cost_s, 3),
                "cost_fraction": record.get("cost_fraction") if valid_both else None,
                "exec_fraction": round(proxy_exec / outcome.execution.wall_s, 4) if valid_both and proxy_exec else None,
                "rows_fraction": record.get("rows_fraction"),
            }
        )

    per_competition = {c.id: summarize([r for r in rows if r["competition"] == c.id]) for c in covered}
    rhos = [s["spearman"] for s in per_competition.values() if s["spearman"] is not None]
    overall = summarize(rows)
    overall["mean_per_competition_spearman"] = float(np.mean(rhos)) if rhos else None
    report = {
        "benchmark": "world_model_quality",
        "predictor": "cheap_execution_proxy",
        "split": {"train_fraction": split.train_fraction, "val_fraction": split.val_fraction, "seed": split.seed},
        "variants": list(args.variants),
        "executor": executor.name,
        "workers": args.workers,
        "covered": [c.id for c in covered],
        "not_covered": uncovered,
        "overall": overall,
        "per_competition": per_competition,
        "items": rows,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, default=_json_default) + "\n")

    table(
        "cheap-execution proxy vs real execution",
        [
            {"competition": cid, **{k: _round(s[k]) for k in _SHOWN}}
            for cid, s in [*per_competition.items(), ("OVERALL", overall)]
        ],
    )
    note(f"wrote {args.out} in {report['wall_s']} s")


_SHOWN = ("n", "spearman", "position_mae", "position_bias", "status_accuracy", "mean_cost_fraction")


def _round(value: Any) -> Any:
    return round(value, 3) if isinstance(value, float) else value


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    return str(value)


if __name__ == "__main__":
    main()
