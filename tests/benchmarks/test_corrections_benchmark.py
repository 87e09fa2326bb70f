"""The corrections benchmark runs end to end in seconds and writes every regime with finite numbers."""

from __future__ import annotations

import math

import pytest
from bench_script import run_benchmark  # found by path, beside this file

REGIMES = ("real", "wm_only", "debias", "denoise", "wmrl", "real_budget")


def _finite_numbers(value, path="$"):
    """Every number inside `value`, as (json path, number) pairs."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, (int, float)):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _finite_numbers(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _finite_numbers(item, f"{path}[{i}]")


def test_quick_run_reports_every_regime_with_finite_numbers(tmp_path):
    out = tmp_path / "corrections.json"
    report = run_benchmark("corrections.py", ["--quick", "--workers", "1"], out, timeout=120)
    assert set(REGIMES) <= set(report["regimes"])
    for name in REGIMES:
        entry = report["regimes"][name]
        assert math.isfinite(entry["final_gap"]["mean"]) and math.isfinite(entry["final_gap"]["std"])
        assert entry["real_evals"]["mean"] >= 0
    assert report["regimes"]["wm_only"]["real_evals"]["mean"] == 0
    # The budget-matched baseline spends exactly the real evaluations wmrl spent.
    assert report["regimes"]["real_budget"]["real_evals"] == report["regimes"]["wmrl"]["real_evals"]
    assert report["parameters"]["bias"] == 2.0 and report["quick"] is True
    assert len(report["calibration"]["mse"]) == len(report["calibration"]["pairs"])
    assert len(report["variance_reduction"]) == 2
    bad = [(where, x) for where, x in _finite_numbers(report) if not math.isfinite(x)]
    assert not bad, bad[:10]


def test_the_report_checks_the_theorems_it_cites(tmp_path):
    report = run_benchmark("corrections.py", ["--quick", "--workers", "1"], tmp_path / "c.json", timeout=120)
    sweep = report["variance_sweep"]
    assert [row["noise"] for row in sweep["rows"]] == [0.02, 0.3, 0.8]
    # The normalised fusion's variance is the independent-groups formula of the measured group variances.
    assert sweep["claims"]["fused_variance_follows_the_formula_within"] < 0.05
    for row in sweep["rows"]:
        assert row["anchor_weight"] == pytest.approx(min(4.0, max(1.0, row["variance_ratio_theory"])))
        expected = row["factor_measured"] < 1.0
        assert expected == (row["variance_ratio_measured"] > 1.0) or row["anchor_weight"] == 1.0
    # GRPO's standardisation makes noise replace signal: V_WM/V_E stays below 1 while 1 + c s^2 grows with noise.
    low, high = sweep["claims"]["measured_ratio_range"]
    assert 0.0 < low <= high < 1.0
    theory = [row["variance_ratio_theory"] for row in sweep["rows"]]
    assert theory == sorted(theory)
    # The bias floor under noise: the map's excess error over a 100k-pair map shrinks as anchor pairs grow.
    calibration = report["calibration"]
    assert calibration["excess_vanishes"] and calibration["slope_excess_mse"] < -0.3
    for pair in report["ordering"]["adjacent_pairs"]:
        assert pair["p_value_one_sided"] is None or 0.0 <= pair["p_value_one_sided"] <= 1.0
        assert pair["significant_at_5pct"] == (
            pair["p_value_one_sided"] is not None and pair["p_value_one_sided"] < 0.05
        )
