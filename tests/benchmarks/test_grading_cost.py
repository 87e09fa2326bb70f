"""The grading-cost benchmark grades every adversarial family in its own process and reports each figure."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from bench_script import REPO_ROOT, run_benchmark  # found by path, beside this file

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
from grading_cost import FAMILIES

pytestmark = pytest.mark.slow


def test_every_family_is_graded_and_only_the_valid_file_passes(tmp_path: Path) -> None:
    out = tmp_path / "grading_cost.json"
    report = run_benchmark("grading_cost.py", ["--rows", "50", "--repeats", "1"], out, timeout=600)
    assert report["benchmark"] == "grading_cost"
    assert report["target"] == {"seconds": 2.0, "peak_mb": 300.0}
    (shape,) = report["shapes"]
    assert shape["rows"] == 50 and shape["size_cap_bytes"] == 16 * 2**20
    assert set(shape["cases"]) == set(FAMILIES)
    for name, case in shape["cases"].items():
        assert case["seconds"] > 0 and case["peak_mb"] >= case["imported_mb"] > 0, name
        # Only the two well-formed files grade valid (AUC ranks 1e308 like any other score).
        assert case["valid"] is (name in ("valid", "overflowing_numbers")), (name, case["reason"])
        assert case["valid"] or case["reason"], name
    assert shape["cases"]["sparse_past_the_cap"]["bytes"] > shape["size_cap_bytes"]
    assert shape["worst_seconds"]["case"] != "valid" and shape["worst_peak_mb"]["case"] != "valid"
    assert isinstance(report["meets_target"], bool)
