"""``wmrl sft``: supervised warm start of a VLA policy from LIBERO demonstration files.

Reads the demonstrations (`wmrl_agents.policies.vla.demos`), fits the policy to their
action tokens (`wmrl_agents.policies.vla.sft`) and writes ``--out/checkpoints/step-N``
in the checkpoint format of ``wmrl train``, plus ``--out/sft.json`` with the loss
history. Torch and the policies are imported inside the command, so ``wmrl --help``
stays fast.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from wmrl_agents.policies.options_file import read_options_file

from wmrl_envs import console
from wmrl_envs.errors import WmrlError

__all__ = ["add_command"]


def add_command(subparsers: argparse._SubParsersAction) -> None:
    """Add ``wmrl sft`` to the ``wmrl`` parser."""
    sft = subparsers.add_parser(
        "sft",
        help="warm-start a VLA policy on LIBERO demonstrations (behaviour cloning on action tokens)",
        description="Supervised warm start; writes checkpoints/ and sft.json into --out.",
    )
    sft.add_argument("--policy", default="tiny-vla", help="'tiny-vla' (CPU VLA) or 'minivla:PATH' (a MiniVLA run)")
    sft.add_argument("--policy-options", type=Path, default=None, help="YAML/JSON of the policy's settings")
    sft.add_argument("--demos", type=Path, nargs="+", required=True, help="LIBERO demonstration files (hdf5)")
    sft.add_argument("--max-demos", type=int, default=None, help="at most this many demonstrations per file")
    sft.add_argument("--epochs", type=int, default=10, help="passes over every demonstration step (default: 10)")
    sft.add_argument("--batch-size", type=int, default=64, help="steps per optimizer step (default: 64)")
    sft.add_argument("--lr", type=float, default=1e-3, help="AdamW learning rate (default: 1e-3)")
    sft.add_argument(
        "--lr-schedule",
        default="constant",
        choices=("constant", "cosine"),
        help="learning rate over the run: constant, or cosine decay to 0 by the last update (default: constant)",
    )
    sft.add_argument("--weight-decay", type=float, default=0.0, help="AdamW weight decay (default: 0)")
    sft.add_argument("--seed", type=int, default=0, help="seed of the policy's initial weights and the step order")
    sft.add_argument(
        "--shift-pixels",
        type=int,
        default=0,
        help="shift each training image by up to N pixels, a fresh shift every epoch (default: 0, none)",
    )
    sft.add_argument("--out", type=Path, required=True, help="output folder (checkpoints/, sft.json)")
    sft.add_argument("--json", action="store_true", help="print the summary as JSON")
    sft.set_defaults(func=_cmd_sft)


def _cmd_sft(args: argparse.Namespace) -> int:
    from wmrl_agents.checkpoint import latest_checkpoint
    from wmrl_agents.policies.factory import make_policy
    from wmrl_agents.policies.vla.base import VLAPolicy
    from wmrl_agents.policies.vla.demos import iter_demos
    from wmrl_agents.policies.vla.sft import SFTConfig, demo_nll, demo_steps, save_policy_checkpoint, train_on_demos

    out: Path = args.out
    if latest_checkpoint(out / "checkpoints") is not None:
        raise WmrlError(f"{out} already holds a checkpoint; choose another --out (nothing is overwritten)")
    config = SFTConfig(
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.lr,
        lr_schedule=args.lr_schedule,
        weight_decay=args.weight_decay,
        seed=args.seed,
        shift_pixels=args.shift_pixels,
    )
    policy = make_policy(
        args.policy, seed=args.seed, options=read_options_file(args.policy_options, "--policy-options")
    )
    if not isinstance(policy, VLAPolicy):
        raise WmrlError(f"wmrl sft trains VLA policies ('tiny-vla' or 'minivla:PATH'), not {args.policy!r}")
    demos = (demo for path in args.demos for demo in iter_demos(path, limit=args.max_demos))
    steps = demo_steps(policy, demos)
    if not args.json:
        console.note(f"{len(steps.sources)} demonstrations, {steps.n_steps} steps from {len(args.demos)} file(s)")
    before = demo_nll(policy, steps)

    def show(epoch: int, loss: float) -> None:
        if not args.json:
            console.note(f"epoch {epoch}/{config.epochs}: NLL per action token {loss:.4f}")

    losses = train_on_demos(policy, steps, config, on_epoch=show)
    updates = config.epochs * -(-steps.n_steps // config.batch_size)
    summary: dict[str, Any] = {
        "policy": policy.name,
        "demos": [str(p) for p in args.demos],
        "demonstrations": len(steps.sources),
        "steps": steps.n_steps,
        "config": asdict(config),
        "nll_before": before,
        "losses": losses,
    }
    checkpoint = save_policy_checkpoint(policy, out, step=updates, summary=summary)
    summary["checkpoint"] = str(checkpoint)
    (out / "sft.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        console.table(
            "Supervised warm start (NLL per action token)",
            [{"epoch": i + 1, "nll": round(loss, 4)} for i, loss in enumerate(losses)],
        )
        console.note(f"checkpoint: {checkpoint}")
        if policy.name == "tiny-vla":
            console.note(f"start GRPO from it with the policy option init_from: {out}")
    return 0
