"""Where a GRPO step of the CPU VLA on LIBERO spends its time, with terminal success and with WMRL.

Runs a few GRPO steps of `tiny-vla` on one LIBERO task through the real trainer
(`wmrl train`'s code path: `LiberoRollouts`, the reward source, the update) once with
``reward: real`` (terminal success) and once with ``reward: corrected`` (terminal
success anchoring an untrained `TinyProgressModel`: the figures are the pipeline's
cost, not the reward's quality). Reports per step: wall time, the policy's share (batched `act`), simulation,
scoring and update, the simulator's success rate, and the rewards' source mix. Prints
a table and writes ``benchmarks/results/libero_grpo.json``.

    MUJOCO_GL=osmesa python benchmarks/libero_grpo.py --assets ../shared/libero-assets-lite --horizon 40
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from rich.console import Console
from rich.table import Table
from wmrl_agents.grpo.config import preset
from wmrl_agents.grpo.trainer import GRPOTrainer
from wmrl_agents.policies.vla.tiny import TinyVLAConfig, TinyVLAPolicy
from wmrl_tasks.libero import ProgressModelConfig, TinyProgressModel

from wmrl_envs.machine import machine_facts

RESULTS = Path(__file__).resolve().parent / "results" / "libero_grpo.json"


def run(reward: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """`args.steps` GRPO steps with `reward`; per-step records and totals."""
    progress = TinyProgressModel(ProgressModelConfig(frame_size=32)).save(work / "progress.pt")
    config = preset("libero-smoke").replace(
        steps=args.steps,
        groups_per_step=args.groups,
        group_size=args.group_size,
        reward=reward,
        world_model=f"tiny-progress:{progress}",
        checkpoint_every=args.steps,
        libero={
            "suite": args.suite,
            "task_ids": [args.task],
            "horizon": args.horizon,
            "image_size": args.image_size,
            "parallel_envs": args.group_size,
            "assets_dir": args.assets,
        },
    )
    policy = TinyVLAPolicy(TinyVLAConfig(image_size=args.image_size))
    trainer = GRPOTrainer(policy, config, work / reward)
    began = time.perf_counter()
    steps = []
    try:
        for _ in range(args.steps):
            record = trainer.train_step()
            spent = record["compute"]["step"]
            steps.append(
                {
                    "step_s": round(spent["step_s"], 3),
                    "policy_s": round(spent["generation_s"], 3),
                    "update_s": round(spent["update_s"], 3),
                    "scoring_s": round(spent["real_execution_s"] + spent["world_model_s"], 3),
                    "success_rate": record["rewards"]["success_rate"],
                    "sources": [g["source"] for g in record["groups"]],
                    "mean_steps": record["rewards"]["mean_steps"],
                }
            )
    finally:
        trainer.collector.close()
    total = time.perf_counter() - began
    episodes = args.steps * args.groups * args.group_size
    return {
        "reward": reward,
        "steps": steps,
        "total_s": round(total, 3),
        "episodes": episodes,
        "env_steps_per_s": round(sum(s["mean_steps"] * args.groups * args.group_size for s in steps) / total, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assets", default=os.environ.get("WMRL_LIBERO_ASSETS"), help="LIBERO asset folder")
    parser.add_argument("--suite", default="libero_spatial")
    parser.add_argument("--task", type=int, default=0)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--groups", type=int, default=2)
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--horizon", type=int, default=40)
    parser.add_argument("--image-size", type=int, default=64)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if not args.assets:
        parser.error("pass --assets or set WMRL_LIBERO_ASSETS (LIBERO's asset folder)")
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory(prefix="wmrl-libero-grpo-") as tmp:
        runs = [run(reward, args, Path(tmp)) for reward in ("real", "corrected")]
    table = Table(title=f"GRPO of tiny-vla on {args.suite}/{args.task}: {args.groups} x {args.group_size} episodes")
    for column in ("reward", "step", "step s", "policy s", "scoring s", "update s", "success", "groups"):
        table.add_column(column)
    for result in runs:
        for i, s in enumerate(result["steps"]):
            table.add_row(
                result["reward"],
                str(i),
                f"{s['step_s']:.1f}",
                f"{s['policy_s']:.1f}",
                f"{s['scoring_s']:.2f}",
                f"{s['update_s']:.1f}",
                f"{s['success_rate']:.2f}",
                ",".join(s["sources"]),
            )
    Console().print(table)
    report = {
        "settings": {k: v for k, v in vars(args).items() if k not in ("out", "assets")},
        "machine": machine_facts(libraries=("torch", "mujoco", "robosuite")),
        "mujoco_gl": os.environ.get("MUJOCO_GL"),
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
