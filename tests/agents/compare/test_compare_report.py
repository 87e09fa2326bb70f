"""The comparison's pooling and files: intervals over seeds, paired differences, the narrow table, JSON and plot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table
from wmrl_agents.compare.methods import ABLATIONS, ADAPTIVE_COST_RATIO, METHODS, config_for, reward_source_for
from wmrl_agents.compare.presets import compare_preset
from wmrl_agents.compare.report import (
    difference_rows,
    sweep_difference_rows,
    sweep_points,
    sweep_rows,
    table_rows,
    write_report,
)
from wmrl_agents.compare.run import pool_runs, training_order
from wmrl_agents.compare.summary import BUDGET_MATCHED, summarize, summarize_sweep
from wmrl_agents.compare.training import curve_steps
from wmrl_agents.grpo.config import preset

from wmrl_envs.rewards import Corrected

RUNS = {"real": 96, "world_model": 24, "wmrl": 48, "debias_only": 48, "denoise_only": 48}


def _row(method: str, score: float) -> dict:
    runs = RUNS[method]
    build = 0 if method == "real" else 24
    return {
        "real_runs": runs,
        "build_real_runs": build,
        "sandbox_runs": runs,
        "real_cpu_s": runs * 0.5,
        "real_wall_s": runs * 2.0,
        "world_model_calls": 0 if method == "real" else 96,
        "failed_calls": 0,
        "failed_calls_s": 0.0,
        "world_model_s": 0.0 if method == "real" else 1.0,
        "world_model_sandbox_runs": 0,
        "world_model_cpu_s": 0.0,
        "generation_s": 0.5,
        "update_s": 0.5,
        "total_s": runs * 2.0 + 1.0 + (0.0 if method == "real" else 1.0),
        "heldout_avg_at_k": score,
        "by_category": {"binary": score, "regression": score / 2},
        "heldout": {"avg_at_k": score},
        "learning_curve": [
            {"step": 3, "real_runs": build + runs // 2, "avg_at_k": (score + 0.2) / 2},
            {"step": 6, "real_runs": runs, "avg_at_k": score},
        ],
        "corrections": [
            {"step": 1, "anchor_weight": None if method == "real" else 1.5, "residual_variance": None},
            {"step": 2, "anchor_weight": None if method == "real" else 1.2, "residual_variance": 0.02},
        ],
    }


def _seed(seed: int, shift: float) -> dict:
    scores = {"real": 0.40, "world_model": 0.30, "wmrl": 0.45, "debias_only": 0.47}
    return {
        "preset": "unit",
        "seed": seed,
        "eval_k": 8,
        "train_tasks": ["a"],
        "heldout_tasks": ["b"],
        "world_model": {"kind": "surrogate", "build_real_runs": 24},
        "initial": {"avg_at_k": 0.2 + shift},
        "methods": {m: _row(m, s + shift) for m, s in scores.items()},
        "real_budget_matched": {"step": 3, "real_runs": 48, "avg_at_k": 0.33 + shift, "budget_real_runs": 48},
    }


def _report(seeds: int = 3) -> dict:
    shifts = [0.0, 0.05, -0.04, 0.02][:seeds]
    return summarize(compare_preset("smoke"), [_seed(s, d) for s, d in enumerate(shifts)], preset("smoke"))


def test_pooled_scores_have_t_intervals_and_paired_differences_cancel_the_seeds_luck() -> None:
    report = _report()
    wmrl = report["methods"]["wmrl"]["heldout"]
    assert wmrl["n"] == 3 and wmrl["low"] < wmrl["mean"] < wmrl["high"]
    # every seed moves every method together: the paired difference is exact, its interval a point
    difference = report["differences"]["wmrl - real"]
    assert difference["mean"] == pytest.approx(0.05) and difference["low"] == pytest.approx(0.05)
    assert report["differences"]["debias_only - wmrl"]["mean"] == pytest.approx(0.02)
    assert report["differences"][f"wmrl - {BUDGET_MATCHED}"]["mean"] == pytest.approx(0.12)
    assert report["methods"]["wmrl"]["ratios"]["real_runs"] == 2.0
    assert report[BUDGET_MATCHED]["real_runs"] == 48
    assert report["methods"]["wmrl"]["learning_curve"][0]["real_runs"] == 48


def test_the_table_fits_100_columns_and_puts_the_budget_matched_baseline_under_real() -> None:
    rows = table_rows(_report())
    assert [r["method"] for r in rows] == [
        "untrained policy",
        "real GRPO",
        "real, WMRL's budget",
        "world model only",
        "WMRL",
        "debias only",
    ]
    assert rows[4]["runs"] == "48" and rows[4]["x fewer"] == "2.00" and rows[4]["avg@1 ±95%"].startswith("0.453±")
    for table_of in (rows, difference_rows(_report())):
        assert _width(table_of) <= 100


def _width(rows: list[dict]) -> int:
    """The widest line of `rows` printed as the command prints its tables."""
    grid = Table()
    for key in rows[0]:
        grid.add_column(key)
    for row in rows:
        grid.add_row(*map(str, row.values()))
    console = Console(width=200, record=True)
    console.print(grid)
    return max(len(line) for line in console.export_text().splitlines())


def test_a_method_run_on_fewer_seeds_is_pooled_over_those_and_paired_on_them() -> None:
    seeds = [_seed(s, d) for s, d in enumerate([0.0, 0.05, -0.04])]
    for later in seeds[1:]:
        del later["methods"]["debias_only"]
    report = summarize(compare_preset("smoke"), seeds, preset("smoke"))
    assert report["methods"]["debias_only"]["heldout"]["n"] == 1 and report["methods"]["wmrl"]["heldout"]["n"] == 3
    assert report["differences"]["debias_only - wmrl"]["n"] == 1
    assert report["differences"]["debias_only - wmrl"]["mean"] == pytest.approx(0.02)
    assert {r["method"]: r["seeds"] for r in table_rows(report)}["debias only"] == 1


def test_seeds_run_apart_pool_into_one_report_and_a_seed_that_does_not_reproduce_is_refused(tmp_path: Path) -> None:
    for name, seed, methods in (("a", 0, ["real", "wmrl"]), ("b", 1, ["real", "wmrl"]), ("c", 0, ["debias_only"])):
        report = _seed(seed, 0.01 * seed)
        report["methods"] = {m: report["methods"][m] for m in methods}
        (tmp_path / name / f"seed-{seed}").mkdir(parents=True)
        (tmp_path / name / f"seed-{seed}" / "compare.json").write_text(json.dumps({**report, "preset": "smoke"}))
    pooled = pool_runs(compare_preset("smoke"), [tmp_path / "c", tmp_path / "a", tmp_path / "b"])
    assert pooled["seeds"] == [0, 1] and list(pooled["methods"]) == ["real", "wmrl", "debias_only"]
    assert pooled["methods"]["debias_only"]["heldout"]["n"] == 1 and pooled["methods"]["wmrl"]["heldout"]["n"] == 2
    clash = json.loads((tmp_path / "a" / "seed-0" / "compare.json").read_text())
    clash["methods"]["wmrl"]["heldout_avg_at_k"] = 0.9
    (tmp_path / "d" / "seed-0").mkdir(parents=True)
    (tmp_path / "d" / "seed-0" / "compare.json").write_text(json.dumps(clash))
    with pytest.raises(ValueError, match="must reproduce"):
        pool_runs(compare_preset("smoke"), [tmp_path / "a", tmp_path / "d"])
    with pytest.raises(ValueError, match="no seed-N/compare.json"):
        pool_runs(compare_preset("smoke"), [tmp_path])


def test_world_model_methods_of_one_seed_built_on_different_world_models_are_not_pooled(tmp_path: Path) -> None:
    # Builds of one seed have differed between machines: pairing their methods would compare two world models.
    logs = {"programs": "p1", "tasks": "t1", "outcomes": "o1", "scores": "s1"}
    for name, fingerprint, digests, methods in (
        ("a", "1111", logs, ["real", "wmrl"]),
        ("b", "2222", {**logs, "outcomes": "o2", "scores": "s2"}, ["debias_only"]),
        ("c", "2222", logs, ["real"]),
        ("d", None, None, ["debias_only"]),
        ("e", "3333", logs, ["debias_only"]),
    ):
        report = {**_seed(0, 0.0), "preset": "smoke"}
        report["methods"] = {m: report["methods"][m] for m in methods}
        report["world_model"] = {**report["world_model"], "fingerprint": fingerprint, "build_digests": digests}
        (tmp_path / name / "seed-0").mkdir(parents=True)
        (tmp_path / name / "seed-0" / "compare.json").write_text(json.dumps(report))
    # The refusal says where the two builds parted: in their runs' outcomes, or only in the fit.
    with pytest.raises(
        ValueError, match="seed 0: the world model built in .* is not the one.* differ in: outcomes, sc"
    ):
        pool_runs(compare_preset("smoke"), [tmp_path / "a", tmp_path / "b"])
    with pytest.raises(ValueError, match="fit on the same runs, so the fit itself differs"):
        pool_runs(compare_preset("smoke"), [tmp_path / "a", tmp_path / "e"])
    # real GRPO uses no world model, and a report from before the fingerprint cannot be checked.
    pooled = pool_runs(compare_preset("smoke"), [tmp_path / "a", tmp_path / "c", tmp_path / "d"])
    assert list(pooled["methods"]) == ["real", "wmrl", "debias_only"]


def test_differences_say_whether_they_are_noise() -> None:
    verdicts = {r["difference"]: r["verdict"] for r in difference_rows(_report())}
    assert verdicts["WMRL - real GRPO"] == "higher" and verdicts["world model only - real GRPO"] == "lower"
    single = {r["difference"]: r["verdict"] for r in difference_rows(_report(seeds=1))}
    assert single["WMRL - real GRPO"] == "one seed: no interval"


def test_write_report_writes_the_json_and_a_png(tmp_path: Path) -> None:
    json_path, png_path = write_report(_report(), tmp_path)
    assert json.loads(json_path.read_text())["methods"]["wmrl"]["heldout"]["n"] == 3
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json_path.name == "compare-smoke.json"


def test_curves_are_evaluated_every_few_steps_and_at_the_end() -> None:
    assert curve_steps(6, 2) == [2, 4, 6] and curve_steps(20, 6) == [6, 12, 18, 20] and curve_steps(2, 5) == [2]
    with pytest.raises(ValueError, match="at least 1"):
        curve_steps(6, 0)


def test_wmrl_trains_before_real_grpo_so_the_budget_is_known() -> None:
    assert training_order(["real", "world_model", "wmrl", "ppi"]) == ["wmrl", "real", "world_model", "ppi"]
    assert training_order(["real", "world_model"]) == ["real", "world_model"]


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
        "centred_map": (True, True),
    }
    estimators = {method: config_for(method, config).corrections.estimator for method in ("wmrl", *ABLATIONS)}
    assert estimators == {
        "wmrl": "fusion",
        "debias_only": "fusion",
        "denoise_only": "fusion",
        "ppi": "ppi",
        "adaptive": "fusion",
        "centred_map": "fusion",
    }
    maps = {method: config_for(method, config).corrections.debias_map for method in ("wmrl", *ABLATIONS)}
    assert maps == {**dict.fromkeys(("wmrl", *ABLATIONS), "steps"), "centred_map": "centred"}
    assert reward_source_for("centred_map", config, predictor).debiaser.map_kind == "centred"
    adaptive = reward_source_for("adaptive", config, predictor).adaptive
    assert adaptive is not None and adaptive.cost_ratio == ADAPTIVE_COST_RATIO  # declared: reproducible from the seed
    assert reward_source_for("wmrl", config, predictor).adaptive is None
    assert reward_source_for("real", config, None).name == "real"
    with pytest.raises(ValueError, match="needs a world model"):
        reward_source_for("world_model", config, None)
    with pytest.raises(ValueError, match="unknown method"):
        reward_source_for("nope", config, predictor)


def test_the_command_offers_exactly_the_methods_the_package_knows() -> None:
    from wmrl_agents.commands import compare

    assert compare._METHODS == METHODS and compare._ABLATIONS == ABLATIONS


@pytest.mark.parametrize(
    ("damage", "named"),
    [
        (lambda report: report["methods"]["wmrl"].pop("world_model_cpu_s"), "wmrl: world_model_cpu_s"),
        (lambda report: report.pop("methods"), "methods"),
        (lambda report: report["methods"].update(wmrl=3), "wmrl: an object"),
    ],
)
def test_pooling_a_seed_report_of_another_version_names_what_it_lacks_and_how_to_redo_it(
    tmp_path: Path, damage, named: str
) -> None:
    report = {**_seed(0, 0.0), "preset": "smoke"}
    damage(report)
    (tmp_path / "seed-0").mkdir()
    (tmp_path / "seed-0" / "compare.json").write_text(json.dumps(report))
    with pytest.raises(ValueError, match=f"lacks .*{named}.*re-run that seed"):
        pool_runs(compare_preset("smoke"), [tmp_path])


def test_pooling_a_truncated_seed_report_says_it_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "seed-0").mkdir()
    (tmp_path / "seed-0" / "compare.json").write_text(json.dumps({**_seed(0, 0.0), "preset": "smoke"})[:200])
    with pytest.raises(ValueError, match="not a readable seed report"):
        pool_runs(compare_preset("smoke"), [tmp_path])


def test_a_published_report_pools_with_new_seeds_and_a_rerun_method_must_reproduce_it(tmp_path: Path) -> None:
    published = summarize(
        compare_preset("smoke"), [{**_seed(s, 0.01 * s), "preset": "smoke"} for s in (0, 1)], preset("smoke")
    )
    published["evaluation_memo"] = {"executed": 10, "reused": 30, "audited": 8, "identical": 7, "differing": ["x"]}
    json_path, _ = write_report(published, tmp_path / "board")
    later = {**_seed(2, 0.02), "preset": "smoke"}
    (tmp_path / "more" / "seed-2").mkdir(parents=True)
    (tmp_path / "more" / "seed-2" / "compare.json").write_text(json.dumps(later))
    rerun = {**_seed(1, 0.01), "preset": "smoke"}
    rerun["methods"] = {"wmrl": rerun["methods"]["wmrl"]}
    (tmp_path / "more" / "seed-1").mkdir(parents=True)
    (tmp_path / "more" / "seed-1" / "compare.json").write_text(json.dumps(rerun))
    pooled = pool_runs(compare_preset("smoke"), [json_path, tmp_path / "more"])
    assert pooled["seeds"] == [0, 1, 2] and pooled["methods"]["real"]["heldout"]["n"] == 3
    assert pooled["methods"]["wmrl"]["heldout"]["mean"] == pytest.approx(0.46)
    twice = pool_runs(compare_preset("smoke"), [json_path, json_path])  # each report's replay audit is kept
    assert twice["evaluation_memo"] == {
        "executed": 20,
        "reused": 60,
        "audited": 16,
        "identical": 14,
        "differing": ["x", "x"],
        "reports": 2,
    }
    rerun["methods"]["wmrl"]["heldout_avg_at_k"] = 0.1
    (tmp_path / "more" / "seed-1" / "compare.json").write_text(json.dumps(rerun))
    with pytest.raises(ValueError, match=r"seed 1: wmrl scored 0.1 in .*must reproduce"):
        pool_runs(compare_preset("smoke"), [json_path, tmp_path / "more"])
    (tmp_path / "bare.json").write_text(json.dumps({"methods": {}}))
    with pytest.raises(ValueError, match="no per_seed reports"):
        pool_runs(compare_preset("smoke"), [tmp_path / "bare.json"])


SWEEP_LEVELS = {"bias p^3": -0.02, "noise 0.2": -0.10}
"""Each swept level's loss against the surrogate as fit, for world-model-only; WMRL loses half of it."""


def _swept_seed(seed: int, shift: float) -> dict:
    report = _seed(seed, shift)
    report["methods"]["denoise_only"] = _row("denoise_only", 0.44 + shift)
    report["sweep"] = {
        name: {
            "quality": {"name": name},
            "methods": {
                m: _row(m, row["heldout_avg_at_k"] + (loss if m == "world_model" else loss / 2))
                for m, row in report["methods"].items()
                if m != "real"
            },
        }
        for name, loss in SWEEP_LEVELS.items()
    }
    return report


def test_the_sweep_pools_per_quality_level_over_the_seeds_that_ran_it() -> None:
    reports = [_swept_seed(0, 0.0), _swept_seed(1, 0.05), _seed(2, -0.04)]
    sweep = summarize_sweep(reports)
    assert sweep["seeds"] == [0, 1]
    assert list(sweep["levels"]) == ["surrogate as fit", "bias p^3", "noise 0.2"]
    noisy = sweep["levels"]["noise 0.2"]
    assert noisy["methods"]["world_model"]["heldout"]["n"] == 2
    assert noisy["methods"]["world_model"]["heldout"]["mean"] == pytest.approx(0.30 + 0.025 - 0.10)
    # real GRPO is the same run at every level: the reference the levels are read against
    assert noisy["methods"]["real"]["heldout"] == sweep["levels"]["surrogate as fit"]["methods"]["real"]["heldout"]
    assert noisy["differences"]["wmrl - world_model"]["mean"] == pytest.approx(0.15 + 0.05)
    assert sweep["levels"]["surrogate as fit"]["differences"]["wmrl - world_model"]["mean"] == pytest.approx(0.15)
    differences = {r["world model"]: r for r in sweep_difference_rows({"sweep": sweep})}
    assert differences["noise 0.2"]["WMRL - WM only"].startswith("+0.200")
    assert differences["noise 0.2"]["WMRL - real"].startswith("+0.000")  # WMRL lost 0.05 of its 0.05 lead
    assert {r["world model"]: r["real GRPO"] for r in sweep_rows({"sweep": sweep})}["noise 0.2"].startswith("0.425±")
    assert sweep["initial"]["mean"] == pytest.approx(0.225)  # the untrained policy over the swept seeds only
    assert summarize_sweep([_seed(0, 0.0)]) == {"seeds": [], "levels": {}}


def _seed_dir(root: Path, report: dict) -> Path:
    (root / f"seed-{report['seed']}").mkdir(parents=True)
    (root / f"seed-{report['seed']}" / "compare.json").write_text(json.dumps({**report, "preset": "smoke"}))
    return root


def test_sweep_levels_run_apart_pool_into_one_sweep_and_a_rerun_level_must_reproduce(tmp_path: Path) -> None:
    surrogate_levels = [_swept_seed(0, 0.0), _swept_seed(1, 0.05)]
    published, _ = write_report(
        {**summarize(compare_preset("smoke"), surrogate_levels, preset("smoke")), "sweep": {}}, tmp_path / "board"
    )
    published_report = json.loads(published.read_text())
    for seed, report in zip((0, 1), surrogate_levels, strict=True):
        published_report["per_seed"][str(seed)] = {**report, "preset": "smoke"}
    published.write_text(json.dumps(published_report))
    proxy_only = _seed(0, 0.0)
    proxy_only["methods"] = {"world_model": proxy_only["methods"]["world_model"]}
    proxy_rows = {m: {**_row(m, 0.35), "world_model_sandbox_runs": 96} for m in ("world_model", "wmrl")}
    proxy_only["sweep"] = {"cheap-execution proxy": {"quality": None, "world_model": "proxy", "methods": proxy_rows}}
    pooled = pool_runs(compare_preset("smoke"), [published, _seed_dir(tmp_path / "proxy", proxy_only)])
    levels = pooled["sweep"]["levels"]
    assert list(levels) == ["surrogate as fit", "bias p^3", "noise 0.2", "cheap-execution proxy"]
    proxy = levels["cheap-execution proxy"]
    assert proxy["seeds"] == [0] and levels["noise 0.2"]["seeds"] == [0, 1]  # each level over the seeds that ran it
    assert proxy["world_model"] == "proxy" and proxy["methods"]["world_model"]["world_model_sandbox_runs"] == 96
    assert proxy["differences"]["wmrl - real"]["mean"] == pytest.approx(0.35 - 0.40)  # real GRPO of the same seed
    proxy_only["sweep"]["cheap-execution proxy"]["methods"]["wmrl"]["heldout_avg_at_k"] = 0.9
    with pytest.raises(ValueError, match=r"seed 0, sweep level cheap-execution proxy: wmrl scored 0.9 .*reproduce"):
        pool_runs(compare_preset("smoke"), [tmp_path / "proxy", _seed_dir(tmp_path / "again", proxy_only)])


def test_the_sweep_tables_fit_100_columns() -> None:
    report = {"sweep": summarize_sweep([_swept_seed(0, 0.0), _swept_seed(1, 0.05)])}
    report["sweep"]["levels"]["bias p^3 + noise 0.2"] = report["sweep"]["levels"]["noise 0.2"]
    for rows in (sweep_rows(report), sweep_difference_rows(report)):
        assert _width(rows) <= 100


def test_the_plot_gains_a_sweep_panel_with_every_swept_method_at_every_level(tmp_path: Path) -> None:
    report = _report()
    report["sweep"] = summarize_sweep([_swept_seed(0, 0.0), _swept_seed(1, 0.05)])
    points = sweep_points(report)
    assert list(points) == ["real", "world_model", "wmrl", "debias_only", "denoise_only"]
    assert [i for i, _ in points["wmrl"]] == [0, 1, 2]
    assert points["world_model"][2][1].mean == pytest.approx(0.225) and points["world_model"][2][1].n == 2
    assert sweep_points(_report()) == {}
    _, with_sweep = write_report(report, tmp_path / "sweep")
    _, without = write_report(_report(), tmp_path / "plain")
    assert _png_width(with_sweep) > _png_width(without)


def _png_width(path: Path) -> int:
    """The image width from the PNG header (IHDR)."""
    return int.from_bytes(path.read_bytes()[16:20], "big")
