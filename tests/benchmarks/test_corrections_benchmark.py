"""The corrections benchmark runs end to end in seconds and writes every regime with finite numbers."""

from __future__ import annotations

import math

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
