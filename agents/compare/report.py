"""The comparison's outputs: a table that fits 100 columns, the paired differences, the JSON and the plot.

The table quotes each held-out score as mean±half-width of the 95% t interval over seeds (the JSON has the
bounds and a bootstrap interval), and costs as counts first: real runs and "x fewer real runs" reproduce from
the seeds; CPU and wall seconds of real runs follow the machine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wmrl_agents.compare.stats import Interval
from wmrl_agents.compare.summary import BUDGET_MATCHED, SWEEP_REPORTED

__all__ = [
    "LABELS",
    "difference_rows",
    "sweep_difference_rows",
    "sweep_points",
    "sweep_rows",
    "table_rows",
    "write_plot",
    "write_report",
]

LABELS = {
    "real": "real GRPO",
    BUDGET_MATCHED: "real, WMRL's budget",
    "world_model": "world model only",
    "wmrl": "WMRL",
    "debias_only": "debias only",
    "denoise_only": "denoise only",
    "ppi": "PPI++ (option)",
    "adaptive": "adaptive (option)",
    "centred_map": "centred map (option)",
}


def table_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per method after the untrained policy (and real GRPO at WMRL's budget after real GRPO)."""
    k = report["eval_k"]
    score = f"avg@{k} ±95%"
    rows = [
        {
            "method": "untrained policy",
            "seeds": report["initial"]["heldout"]["n"],
            score: _interval(report["initial"]["heldout"]).pm(),
            "runs": "-",
            "x fewer": "-",
            "CPU s": "-",
            "WM CPU s": "-",
            "wall s": "-",
        }
    ]
    for method, row in report["methods"].items():
        ratio = (row.get("ratios") or {}).get("real_runs")
        rows.append(
            {
                "method": LABELS.get(method, method),
                "seeds": row["heldout"]["n"],
                score: _interval(row["heldout"]).pm(),
                "runs": _count(row["real_runs"]),
                "x fewer": "-" if ratio is None else f"{ratio:.2f}",
                "CPU s": f"{row['real_cpu_s']:.0f}",
                "WM CPU s": f"{row['world_model_cpu_s']:.0f}",
                "wall s": f"{row['real_wall_s']:.0f}",
            }
        )
        budget = report.get(BUDGET_MATCHED)
        if method == "real" and budget:
            base = row["real_runs"]
            rows.append(
                {
                    "method": LABELS[BUDGET_MATCHED],
                    "seeds": budget["heldout"]["n"],
                    score: _interval(budget["heldout"]).pm(),
                    "runs": _count(budget["real_runs"]),
                    "x fewer": f"{base / budget['real_runs']:.2f}" if budget["real_runs"] else "-",
                    "CPU s": "-",
                    "WM CPU s": "-",
                    "wall s": "-",
                }
            )
    return rows


def difference_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The paired per-seed differences of held-out scores, with their 95% intervals."""
    rows = []
    for name, data in report["differences"].items():
        interval = _interval(data)
        a, b = name.split(" - ")
        rows.append(
            {
                "difference": f"{LABELS.get(a, a)} - {LABELS.get(b, b)}",
                "mean [95% CI]": interval.text(signed=True),
                "seeds": interval.n,
                "verdict": _verdict(interval),
            }
        )
    return rows


def sweep_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per world-model quality: real GRPO's held-out score (the reference) and each swept method's."""
    rows = []
    for name, level in report["sweep"]["levels"].items():
        methods = level["methods"]
        row: dict[str, Any] = {"world model": name}
        for method in SWEEP_REPORTED:
            label = "WM only" if method == "world_model" else LABELS[method]
            row[label] = _interval(methods[method]["heldout"]).pm() if method in methods else "-"
        rows.append(row)
    return rows


def sweep_difference_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per world-model quality: the paired differences that say whether WMRL beat its uncorrected source
    and real GRPO there, and whether either correction alone did as well."""
    pairs = {
        "WMRL - WM only": "wmrl - world_model",
        "WMRL - real": "wmrl - real",
        "debias - WMRL": "debias_only - wmrl",
        "denoise - WMRL": "denoise_only - wmrl",
    }
    rows = []
    for name, level in report["sweep"]["levels"].items():
        row: dict[str, Any] = {"world model": name}
        for label, key in pairs.items():
            gap = level["differences"].get(key)
            row[label] = _interval(gap).pm(signed=True) if gap else "-"
        rows.append(row)
    return rows


def sweep_points(report: dict[str, Any]) -> dict[str, list[tuple[int, Interval]]]:
    """Per method of the sweep (real GRPO first, as the reference), its held-out interval at each quality level,
    as (level index, interval) in the sweep's order; a method missing at a level is skipped there."""
    levels = list(report.get("sweep", {}).get("levels", {}).values())
    points: dict[str, list[tuple[int, Interval]]] = {}
    for method in SWEEP_REPORTED:
        present = [
            (i, _interval(level["methods"][method]["heldout"]))
            for i, level in enumerate(levels)
            if method in level["methods"]
        ]
        if present:
            points[method] = present
    return points


def write_report(report: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    """Write ``compare-<preset>.json`` and ``compare-<preset>.png`` into `out_dir`; returns both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"compare-{report['preset']}"
    json_path = out_dir / f"{stem}.json"
    json_path.write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    png_path = write_plot(report, out_dir / f"{stem}.png")
    return json_path, png_path


def write_plot(report: dict[str, Any], path: Path) -> Path:
    """Held-out learning curves against real runs spent, the corrections' anchor weight and residual variance,
    and, when the report has the quality sweep, each swept method's held-out score per world-model quality."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweep = sweep_points(report)
    fig = plt.figure(figsize=(19 if sweep else 13, 5.5))
    grid = fig.add_gridspec(2, 3 if sweep else 2, width_ratios=(1.6, 1.2, 1) if sweep else (1.6, 1))
    curves, weight, residual = fig.add_subplot(grid[:, 0]), fig.add_subplot(grid[0, -1]), fig.add_subplot(grid[1, -1])
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    methods = list(dict.fromkeys([*report["methods"], *sweep]))
    colors = {method: cycle[i % len(cycle)] for i, method in enumerate(methods)}
    _draw_curves(curves, report, colors)
    _draw_corrections(weight, residual, report, colors)
    if sweep:
        _draw_sweep(fig.add_subplot(grid[:, 1]), report, sweep, colors)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _draw_curves(axis: Any, report: dict[str, Any], colors: dict[str, str]) -> None:
    k, seeds = report["eval_k"], report["seeds"]
    start = report["initial"]["heldout"]["mean"]
    means = [start]
    for method, row in report["methods"].items():
        # A world-model method's policy is still the untrained one after its build's real runs.
        origin = {"real_runs": row.get("build_real_runs", 0.0), "avg_at_k": start, "low": None, "high": None}
        points = [origin, *row["learning_curve"]]
        xs = [p["real_runs"] for p in points]
        ys = [p["avg_at_k"] for p in points]
        means += ys
        style = {"linewidth": 2.4} if method == "wmrl" else {"linewidth": 1.3, "alpha": 0.9}
        label = f"{LABELS.get(method, method)}: {_interval(row['heldout']).pm()}"
        axis.plot(xs, ys, marker="o", markersize=3, color=colors[method], label=label, **style)
        bands = [(p["real_runs"], p["low"], p["high"]) for p in points if p["low"] is not None]
        if len(bands) > 1 and method in ("real", "wmrl", "world_model"):
            bx, lo, hi = zip(*bands, strict=True)
            axis.fill_between(bx, lo, hi, color=colors[method], alpha=0.1, linewidth=0)
    budget = report.get(BUDGET_MATCHED)
    if budget:
        axis.errorbar(
            [budget["real_runs"]],
            [budget["heldout"]["mean"]],
            yerr=_yerr(budget["heldout"]),
            fmt="s",
            color="black",
            capsize=3,
            label=f"{LABELS[BUDGET_MATCHED]}: {_interval(budget['heldout']).pm()}",
        )
        means.append(budget["heldout"]["mean"])
    axis.set_ylim(max(0.0, min(means) - 0.08), min(1.0, max(means) + 0.08))
    axis.set_xlabel("real runs spent (world-model build included)")
    axis.set_ylabel(f"held-out avg@{k} position score")
    axis.set_title(f"Held-out learning curves ({report['preset']}; mean over seeds {_seed_list(seeds)}, 95% t bands)")
    axis.legend(fontsize=8, loc="best", title="final avg ±95% CI", title_fontsize=8)
    axis.grid(alpha=0.3)


def _draw_corrections(weight: Any, residual: Any, report: dict[str, Any], colors: dict[str, str]) -> None:
    drawn = False
    for method in report["methods"]:
        seeds = [r["methods"][method]["corrections"] for r in report["per_seed"].values() if method in r["methods"]]
        for axis, key in ((weight, "anchor_weight"), (residual, "residual_variance")):
            steps, values = _mean_by_step(seeds, key)
            if steps:
                drawn = True
                axis.plot(steps, values, marker=".", color=colors[method], label=LABELS.get(method, method))
    weight.set_ylabel("anchor weight")
    weight.set_title("Corrections over training (mean over seeds)")
    residual.set_ylabel("residual variance")
    residual.set_xlabel("training step")
    for axis in (weight, residual):
        axis.grid(alpha=0.3)
        axis.xaxis.get_major_locator().set_params(integer=True)
    if drawn:
        weight.legend(fontsize=7, ncol=2)
    else:
        weight.text(0.5, 0.5, "no corrected method in this comparison", ha="center", va="center")


def _draw_sweep(
    axis: Any, report: dict[str, Any], sweep: dict[str, list[tuple[int, Interval]]], colors: dict[str, str]
) -> None:
    names = list(report["sweep"]["levels"])
    width = 0.6 / max(1, len(sweep) - 1)
    for offset, (method, points) in enumerate(sweep.items()):
        xs = [i - 0.3 + offset * width for i, _ in points]
        means = [p.mean for _, p in points]
        errors = [[p.mean - p.low, p.high - p.mean] if p.low is not None else [0.0, 0.0] for _, p in points]
        style = {"linewidth": 2.2} if method == "wmrl" else {"linewidth": 1.0, "linestyle": ":"}
        axis.errorbar(
            xs,
            means,
            yerr=list(map(list, zip(*errors, strict=True))),
            marker="o",
            markersize=4,
            capsize=3,
            color=colors[method],
            label=LABELS.get(method, method),
            **style,
        )
    untrained = report["sweep"]["initial"]["mean"]
    axis.axhline(untrained, color="gray", linestyle="--", linewidth=1, label=f"untrained policy: {untrained:.3f}")
    axis.set_xticks(range(len(names)), [n.replace(" + ", "\n+ ") for n in names], fontsize=8)
    axis.set_xlabel("world model (the learned surrogate made worse; the cheap-execution proxy)")
    axis.set_ylabel(f"held-out avg@{report['eval_k']} position score")
    axis.set_title(f"World-model quality sweep (seeds {_seed_list(report['sweep']['seeds'])}, 95% t)")
    axis.legend(fontsize=8, loc="best")
    axis.grid(alpha=0.3)


def _mean_by_step(curves: list[list[dict[str, Any]]], key: str) -> tuple[list[int], list[float]]:
    by_step: dict[int, list[float]] = {}
    for curve in curves:
        for point in curve:
            if point.get(key) is not None:
                by_step.setdefault(point["step"], []).append(float(point[key]))
    steps = sorted(by_step)
    return steps, [sum(by_step[s]) / len(by_step[s]) for s in steps]


def _yerr(data: dict[str, Any]) -> Any:
    if data.get("low") is None:
        return None
    return [[data["mean"] - data["low"]], [data["high"] - data["mean"]]]


def _interval(data: dict[str, Any]) -> Interval:
    return Interval(data["mean"], data.get("low"), data.get("high"), data["n"], data.get("level", 0.95))


def _seed_list(seeds: list[int]) -> str:
    return ", ".join(map(str, seeds))


def _count(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def _verdict(interval: Interval) -> str:
    if interval.n < 2:
        return "one seed: no interval"
    if not interval.excludes_zero:
        return "within noise"
    return "higher" if interval.mean > 0 else "lower"
