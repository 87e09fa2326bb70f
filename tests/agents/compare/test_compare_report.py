"""The comparison's arithmetic and files: ratios to real GRPO, the table, the JSON and the plot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from wmrl_agents.compare.methods import ABLATIONS, METHODS, config_for, reward_source_for
from wmrl_agents.compare.report import table_rows, write_report
from wmrl_agents.compare.run import _ratios
from wmrl_agents.grpo.config import preset

from wmrl_envs.rewards import Corrected


def _row(real_s: float, total_s: float, score: float) -> dict:
    return {
        "real_exec_s": real_s,
        "world_model_s": total_s - real_s,
        "total_s": total_s,
        "heldout_avg_at_k": score,
        "by_category": {"binary": score, "regression": score / 2},
        "curve": [
            {"step": 1, "anchor_weight": 1.5, "residual_variance": 0.02},
            {"step": 2, "anchor_weight": None, "residual_variance": None},
        ],
    }


def _report() -> dict:
    methods = {"real": _row(700.0, 700.0, 0.4), "wmrl": _row(200.0, 250.0, 0.45), "world_model": _row(0.0, 0.0, 0.2)}
    return {
        "preset": "unit",
        "eval_k": 8,
        "initial": {"avg_at_k": 0.3, "by_category": {"binary": 0.3}},
        "methods": methods,
        "ratios": _ratios(methods),
    }


def test_ratios_are_real_grpo_compute_over_each_methods() -> None:
    ratios = _report()["ratios"]
    assert ratios["real"] == {"real_exec": 1.0, "total": 1.0}
    assert ratios["wmrl"] == {"real_exec": 3.5, "total": 2.8}
    assert ratios["world_model"] == {"real_exec": None, "total": None}  # nothing spent: no finite ratio


def test_without_a_real_run_there_is_nothing_to_compare_against() -> None:
    assert _ratios({"wmrl": _row(1.0, 1.0, 0.1)}) == {}


def test_table_has_the_untrained_policy_first_and_categories_without_tasks_empty() -> None:
    rows = table_rows(_report())
    assert [r["method"] for r in rows] == ["untrained policy", "real", "wmrl", "world_model"]
    assert rows[2]["x less real"] == 3.5 and rows[2]["held-out avg@8"] == 0.45
    assert rows[2]["regression"] == 0.225 and rows[2]["multiclass"] is None


def test_write_report_writes_the_json_and_a_png(tmp_path: Path) -> None:
    json_path, png_path = write_report(_report(), tmp_path)
    assert json.loads(json_path.read_text())["ratios"]["wmrl"]["real_exec"] == 3.5
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json_path.name == "compare-unit.json"


def test_ablations_switch_one_correction_off() -> None:
    config = preset("smoke")
    from wmrl_envs.world_models import LearnedSurrogate

    predictor = LearnedSurrogate()
    switches = {}
    for method in ("wmrl", *ABLATIONS):
        source = reward_source_for(method, config, predictor)
        assert isinstance(source, Corrected)
        switches[method] = (source.debias, source.denoise)
    assert switches == {
        "wmrl": (True, True),
        "debias_only": (True, False),
        "denoise_only": (False, True),
        "ppi": (True, True),
        "adaptive": (True, True),
    }
    estimators = {method: config_for(method, config).corrections.estimator for method in ("wmrl", *ABLATIONS)}
    assert estimators == {
        "wmrl": "fusion",
        "debias_only": "fusion",
        "denoise_only": "fusion",
        "ppi": "ppi",
        "adaptive": "fusion",
    }
    assert reward_source_for("adaptive", config, predictor).adaptive is not None
    assert reward_source_for("wmrl", config, predictor).adaptive is None
    assert reward_source_for("real", config, None).name == "real"
    with pytest.raises(ValueError, match="needs a world model"):
        reward_source_for("world_model", config, None)
    with pytest.raises(ValueError, match="unknown method"):
        reward_source_for("nope", config, predictor)


def test_the_command_offers_exactly_the_methods_the_package_knows() -> None:
    from wmrl_agents.commands import compare

    assert compare._METHODS == METHODS and compare._ABLATIONS == ABLATIONS
