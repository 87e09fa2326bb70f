"""The LIBERO comparison's outputs: a table, ``libero-compare-<name>.json`` and a plot of its success curves.

Held-out success is pooled over seeds (successes / episodes) with a 95% Wilson
interval, the binomial interval that stays inside [0, 1] at the few dozen episodes
a CPU run affords; the per-seed rates are kept next to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .compare import pooled
from .evaluate import wilson_interval

__all__ = ["table_rows", "write_libero_compare"]


def table_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row for the warm start, then one per method: held-out success (interval), per-seed rates and costs."""
    initial = report["initial"]
    low, high = wilson_interval(initial["successes"], initial["episodes"])
    rows = [
        {
            "method": "warm start (SFT)",
            "held-out success": f"{initial['successes']}/{initial['episodes']} = {initial['success_rate']:.3f}",
            "95% interval": f"[{low:.2f}, {high:.2f}]",
            "per seed": "",
            "train success (first -> last step)": "",
            "success checks": 0,
            "sim s": 0.0,
            "episodes": 0,
        }
    ]
    for method, entry in report["methods"].items():
        runs = entry["runs"]
        successes, episodes = pooled(runs)
        low, high = wilson_interval(successes, episodes)
        first = _mean([r["curve"][0]["success_rate"] for r in runs])
        last = _mean([r["curve"][-1]["success_rate"] for r in runs])
        rows.append(
            {
                "method": method,
                "held-out success": f"{successes}/{episodes} = {successes / episodes:.3f}",
                "95% interval": f"[{low:.2f}, {high:.2f}]",
                "per seed": ", ".join(f"{r['held_out']['success_rate']:.2f}" for r in runs),
                "train success (first -> last step)": f"{first:.3f} -> {last:.3f}",
                "success checks": sum(r["success_checks"] for r in runs),
                "sim s": round(sum(r["simulation_s"] for r in runs), 1),
                "episodes": sum(r["episodes"] for r in runs),
            }
        )
    return rows


def write_libero_compare(report: dict[str, Any], out_dir: Path, name: str) -> tuple[Path, Path]:
    """Write ``libero-compare-<name>.json`` (with the table) and ``.png`` into `out_dir`; returns both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = out_dir / f"libero-compare-{name}"
    json_path = stem.with_suffix(".json")
    json_path.write_text(json.dumps({**report, "table": table_rows(report)}, indent=2), encoding="utf-8")
    return json_path, _write_plot(report, stem.with_suffix(".png"))


def _write_plot(report: dict[str, Any], path: Path) -> Path:
    """Left: training-episode success per step (mean over seeds, min-max band); right: held-out success vs checks."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    initial = report["initial"]
    for method, entry in report["methods"].items():
        runs = entry["runs"]
        steps = [p["step"] for p in runs[0]["curve"]]  # the trainer counts steps from 1
        per_step = [[r["curve"][i]["success_rate"] for r in runs] for i in range(len(steps))]
        line = left.plot(steps, [_mean(v) for v in per_step], marker="o", label=method)
        left.fill_between(
            steps, [min(v) for v in per_step], [max(v) for v in per_step], alpha=0.2, color=line[0].get_color()
        )
        successes, episodes = pooled(runs)
        low, high = wilson_interval(successes, episodes)
        rate = successes / episodes
        checks = sum(r["success_checks"] for r in runs)
        right.errorbar([checks], [rate], yerr=[[rate - low], [high - rate]], marker="o", capsize=4, label=method)
    right.axhline(initial["success_rate"], color="grey", linestyle="--", label="warm start")
    settings = report["settings"]
    left.set_xticks([p["step"] for p in next(iter(report["methods"].values()))["runs"][0]["curve"]])
    left.set_xlabel("GRPO step")
    left.set_ylabel("success rate of the training episodes (simulator's verdict)")
    left.set_title(f"{settings['suite']} tasks {settings['task_ids']}, seeds {settings['seeds']} (band: min-max)")
    left.legend(fontsize=8)
    right.set_xlabel("terminal-success checks the reward used (all seeds)")
    right.set_ylabel("held-out success rate (95% Wilson interval)")
    right.set_title("Held-out success vs success checks spent (lite assets)")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _mean(values: list[float | None]) -> float:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else float("nan")
