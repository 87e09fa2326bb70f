"""A benchmark result's headline numbers and its JSON form, on a hand-computed example."""

from __future__ import annotations

import json

import pytest
from wmrl_agents.bench.results import BenchResult


def test_headline_numbers_match_the_hand_computation(hand_result: BenchResult) -> None:
    # Task avg@2: churn 0.7, fraud 0.2, houses 0.3; binary = 0.45, regression = 0.3, overall = 1.2 / 3.
    assert hand_result.overall_avg_at_k == pytest.approx(0.4)
    assert hand_result.by_category == pytest.approx({"binary": 0.45, "regression": 0.3})
    assert list(hand_result.by_category) == ["binary", "regression"]
    overall = hand_result.summary["overall"]
    assert overall.valid_rate == pytest.approx((1 + 0.5 + 1) / 3)
    assert overall.best_of_k == pytest.approx((0.8 + 0.4 + 0.3) / 3)
    assert overall.medal_rate == pytest.approx(0.5 / 3)


def test_the_dict_is_json_and_keeps_every_attempt_and_the_metadata(hand_result: BenchResult) -> None:
    data = json.loads(json.dumps(hand_result.to_dict()))
    assert data["overall_avg_at_k"] == pytest.approx(0.4)
    assert data["by_category"] == pytest.approx({"binary": 0.45, "regression": 0.3})
    assert set(data["summary"]) == {"overall", "binary", "regression"}
    assert data["summary"]["binary"]["tasks"] == 2
    meta = data["meta"]
    for key in ("policy", "split", "k", "seed", "wmrl_version", "date", "executor", "real_exec_s", "command"):
        assert key in meta
    fraud = next(t for t in data["tasks"] if t["task"] == "fraud")
    assert [a["position"] for a in fraud["attempts"]] == [0.4, 0.0]
    assert fraud["attempts"][1]["valid"] is False and fraud["attempts"][1]["reason"]
    assert fraud["exec_s"] == 4.0 and fraud["avg_at_k"] == pytest.approx(0.2)


def test_a_result_needs_a_task(hand_result: BenchResult) -> None:
    with pytest.raises(ValueError, match="at least one task"):
        BenchResult(hand_result.meta, ())
