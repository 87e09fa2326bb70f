"""The step log: one JSON object per training step in ``steps.jsonl``, and the line a person reads per step.

Records are structured so that everything a step decided (tasks, rewards by source,
corrections' state, loss terms) sits apart from what it cost (the ``compute`` key,
wall-clock seconds that differ between two runs of the same seed). On resume the log
is cut back to the checkpoint's step, so steps redone after a kill are not logged twice
and a resumed run's log equals the uninterrupted run's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from wmrl_envs import console
from wmrl_envs.atomic_file import write_text_atomically

__all__ = ["StepLog", "format_step"]


class StepLog:
    """Appends step records to a JSONL file, flushing each one so a killed run keeps every finished step."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def append(self, record: dict[str, Any]) -> None:
        """Write one record as a line."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, sort_keys=True, default=_jsonable) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def read(self) -> list[dict[str, Any]]:
        """Every complete record (a line cut short by a kill is skipped)."""
        if not self.path.is_file():
            return []
        records = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return records

    def truncate(self, step: int) -> None:
        """Keep only the records of steps up to `step` (rewritten atomically)."""
        if not self.path.is_file():
            return
        kept = [r for r in self.read() if isinstance(r.get("step"), int) and r["step"] <= step]
        write_text_atomically(self.path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in kept))

    @staticmethod
    def show(record: dict[str, Any], total_steps: int) -> None:
        """Print the step's one-line summary for a person watching the run."""
        console.note(format_step(record, total_steps))


def format_step(record: dict[str, Any], total_steps: int) -> str:
    """One line: step, rewards by source, the corrections' state, loss terms and the step's seconds."""
    parts = [f"step {record['step']}/{total_steps}"]
    rewards = record.get("rewards", {})
    for key, label in (("reward_mean", "reward"), ("real_mean", "real"), ("world_model_mean", "wm")):
        if rewards.get(key) is not None:
            parts.append(f"{label} {rewards[key]:.3f}")
    corrections = record.get("corrections") or {}
    if corrections:
        s2 = corrections.get("residual_variance")
        parts.append(
            f"anchor w {corrections.get('anchor_weight', 0):.2f} s2 {'-' if s2 is None else f'{s2:.3f}'} "
            f"pairs {corrections.get('n_pairs')} "
            f"{'calibrated' if corrections.get('calibrated') else 'uncalibrated'} {corrections.get('fallback_state')}"
        )
    update = record.get("update", {})
    for key in ("loss", "kl", "entropy", "clip_fraction"):
        if update.get(key) is not None:
            parts.append(f"{key} {update[key]:.4g}")
    if rewards.get("excluded"):
        parts.append(f"excluded {rewards['excluded']}")
    seconds = record.get("compute", {}).get("step", {}).get("step_s")
    if seconds is not None:
        parts.append(f"{seconds:.1f}s")
    return " | ".join(parts)


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    return str(value)
