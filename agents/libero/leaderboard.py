"""A LIBERO evaluation as leaderboard files: JSON (everything), CSV (one row per scope) and Markdown.

The CSV has the code benchmark's columns (`wmrl_agents.bench.files.CSV_COLUMNS`), so
LIBERO and code results concatenate into one table: ``split`` is the suite's
initial-state set, ``category`` the suite, ``avg_at_k`` the success rate, and the
code-only columns (valid rate, medal rate) stay empty; ``real_exec_s`` holds the
simulation seconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wmrl_agents.bench.files import markdown_table, write_file_set
from wmrl_agents.bench.specs import policy_slug

from .evaluate import LiberoEvalResult

__all__ = ["default_libero_name", "write_libero_leaderboard"]


def default_libero_name(result: LiberoEvalResult) -> str:
    """``libero-<policy-slug>-<suite>-k<K>``: one file set per policy, suite and K."""
    meta = result.meta
    return f"libero-{policy_slug(meta.policy)}-{meta.suite}-k{meta.k}"


def write_libero_leaderboard(result: LiberoEvalResult, out_dir: Path, name: str | None = None) -> dict[str, Path]:
    """Write ``<name>.json``, ``.csv`` and ``.md`` under `out_dir` (created if missing); return their paths."""
    name = name if name is not None else default_libero_name(result)
    return write_file_set(out_dir, name, result.to_dict(), _rows(result), _markdown(result))


def _rows(result: LiberoEvalResult) -> list[dict[str, Any]]:
    meta = result.meta
    common = {
        "policy": meta.policy,
        "split": meta.init_states,
        "k": meta.k,
        "seed": meta.seed,
        "max_turns": 1,
        "wmrl_version": meta.wmrl_version,
        "date": meta.date,
        "category": meta.suite,
        "valid_rate": "",
        "medal_rate": "",
    }
    rows = [
        {**common, "scope": "task", "name": t.task, "tasks": 1, "avg_at_k": round(t.avg_at_k, 6)}
        | {"best_of_k": round(t.best_of_k, 6), "real_exec_s": t.simulation_s}
        for t in result.tasks
    ]
    rows.append(
        {**common, "scope": "overall", "name": meta.suite, "tasks": len(result.tasks)}
        | {"avg_at_k": round(result.avg_at_k, 6), "best_of_k": round(result.best_of_k, 6)}
        | {"real_exec_s": round(sum(t.simulation_s for t in result.tasks), 3)}
    )
    return rows


def _markdown(result: LiberoEvalResult) -> str:
    meta = result.meta
    lines = [
        f"# LIBERO evaluation: `{meta.policy}` on {meta.suite}, success rate avg@{meta.k}",
        "",
        f"- Policy: `{meta.policy}`",
        f"- Suite: {meta.suite} ({len(result.tasks)} tasks); initial states: {meta.init_states}",
        f"- Attempts per initial state (K): {meta.k}; sampling temperature {meta.temperature:g}; seed {meta.seed}",
        f"- Horizon: {meta.horizon} steps; cameras at {meta.image_size} px; {meta.parallel_envs} simulators in lockstep",
        f"- wmrl {meta.wmrl_version}, {meta.date}; elapsed {meta.elapsed_s:.1f} s",
    ]
    if meta.command:
        lines.append(f"- Command: `{meta.command}`")
    table = [
        {
            "task": t.task,
            "instruction": t.instruction,
            "episodes": t.episodes,
            "success rate": f"{t.avg_at_k:.3f}",
            "95% Wilson": "[{:.2f}, {:.2f}]".format(*t.success_interval),
            "best of K": f"{t.best_of_k:.3f}",
            "mean steps": f"{t.mean_steps:.1f}",
        }
        for t in result.tasks
    ]
    table.append(
        {
            "task": "overall",
            "instruction": "",
            "episodes": sum(t.episodes for t in result.tasks),
            "success rate": f"{result.avg_at_k:.3f}",
            "95% Wilson": "",
            "best of K": f"{result.best_of_k:.3f}",
            "mean steps": "",
        }
    )
    lines += ["", "Success rate: share of episodes the simulator judged successful; suite mean over tasks.", ""]
    lines += markdown_table(table)
    ranking = result.progress_ranking()
    if ranking is not None:
        auc, rho = (None if v is None else round(v, 3) for v in (ranking["auc"], ranking["spearman"]))
        note = (
            f"Progress model on these {ranking['episodes']} episodes ({ranking['successes']} successes): AUC of "
            f"success {auc}, Spearman {rho} (None: undefined, one class only or constant scores)."
        )
        lines += ["", note]
    return "\n".join([*lines, ""])
