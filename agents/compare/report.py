"""The comparison's outputs: a Table-1-style table, the leaderboard JSON, and the plots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["table_rows", "write_plot", "write_report"]

CATEGORIES = ("binary", "multiclass", "regression", "other")


def table_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per method (after the untrained policy): compute by source, ratios to real GRPO, held-out avg@K."""
    k = report["eval_k"]
    initial = report["initial"]
    rows = [
        {
            "method": "untrained policy",
            "real exec s": 0.0,
            "world model s": 0.0,
            "total s": 0.0,
            "x less real": None,
            "x less total": None,
            f"held-out avg@{k}": round(initial["avg_at_k"], 3),
            **{c: _rounded(initial["by_category"].get(c)) for c in CATEGORIES},
        }
    ]
    for method, row in report["methods"].items():
        ratio = report["ratios"].get(method, {})
        rows.append(
            {
                "method": method,
                "real exec s": round(row["real_exec_s"], 1),
                "world model s": round(row["world_model_s"], 1),
                "total s": round(row["total_s"], 1),
                "x less real": ratio.get("real_exec"),
                "x less total": ratio.get("total"),
                f"held-out avg@{k}": round(row["heldout_avg_at_k"], 3),
                **{c: _rounded(row["by_category"].get(c)) for c in CATEGORIES},
            }
        )
    return rows


def write_report(report: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    """Write ``compare-<preset>.json`` and ``compare-<preset>.png`` into `out_dir`; returns both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"compare-{report['preset']}"
    json_path = out_dir / f"{stem}.json"
    json_path.write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    png_path = write_plot(report, out_dir / f"{stem}.png")
    return json_path, png_path


def write_plot(report: dict[str, Any], path: Path) -> Path:
    """Held-out score against real-execution compute per method, and anchor weight / residual variance per step."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    k = report["eval_k"]
    start = report["initial"]["avg_at_k"]
    for method, row in report["methods"].items():
        line = left.plot([0.0, row["real_exec_s"]], [start, row["heldout_avg_at_k"]], marker="o", label=method)
        left.annotate(
            f"{row['heldout_avg_at_k']:.3f}",
            (row["real_exec_s"], row["heldout_avg_at_k"]),
            color=line[0].get_color(),
            textcoords="offset points",
            xytext=(4, 4),
            fontsize=8,
        )
    left.set_xlabel("real-execution seconds spent on training (world-model build included)")
    left.set_ylabel(f"held-out avg@{k} position score")
    left.set_title(f"Held-out score vs real-execution compute ({report['preset']})")
    left.legend(fontsize=8)
    plotted = False
    for method, row in report["methods"].items():
        steps = [p["step"] for p in row["curve"] if p["anchor_weight"] is not None]
        if not steps:
            continue
        plotted = True
        weights = [p["anchor_weight"] for p in row["curve"] if p["anchor_weight"] is not None]
        right.plot(steps, weights, marker=".", label=f"{method}: anchor weight")
        residual = [(p["step"], p["residual_variance"]) for p in row["curve"] if p["residual_variance"] is not None]
        if residual:
            right.plot(*zip(*residual, strict=True), linestyle="--", label=f"{method}: residual variance")
    right.set_xlabel("training step")
    right.set_title("Corrections over training")
    if plotted:
        right.legend(fontsize=8)
    else:
        right.text(0.5, 0.5, "no corrected method in this comparison", ha="center", va="center")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
