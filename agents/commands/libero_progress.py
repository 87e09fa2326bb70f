"""``wmrl libero-progress``: train the CPU progress world model on LIBERO demonstrations.

A demonstration is a successful episode, so how far along it a frame lies is its
progress: each demonstration gives its whole episode (progress 1) and evenly spaced
prefixes labelled by the fraction of the episode they cover (`progress_examples`),
the labels progress-predicting reward models such as Robometer are trained on. The
saved model is the world model of ``wmrl train --preset libero* --reward corrected
--world-model tiny-progress:PATH``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

__all__ = ["add_command"]


def add_command(subparsers: argparse._SubParsersAction) -> None:
    """Add ``wmrl libero-progress`` to the ``wmrl`` parser."""
    cmd = subparsers.add_parser(
        "libero-progress",
        help="train the CPU progress world model (TinyProgressModel) on LIBERO demonstration files",
        description="Fit a TinyProgressModel to the progress along LIBERO demonstrations and save it to --out.",
    )
    cmd.add_argument("--demos", type=Path, nargs="+", required=True, help="LIBERO demonstration files (hdf5)")
    cmd.add_argument("--max-demos", type=int, default=None, help="at most this many demonstrations per file")
    cmd.add_argument(
        "--prefixes", type=int, default=3, help="prefixes per demonstration besides the whole (default: 3)"
    )
    cmd.add_argument("--epochs", type=int, default=None, help="training epochs (default: the model's, 40)")
    cmd.add_argument("--frame-size", type=int, default=None, help="frames are resized to this (default: 32 px)")
    cmd.add_argument("--seed", type=int, default=0, help="seed of weights and batch order")
    cmd.add_argument("--out", type=Path, required=True, help="where the model file goes (e.g. progress.pt)")
    cmd.add_argument("--json", action="store_true", help="print the training summary as JSON")
    cmd.set_defaults(func=run_libero_progress)


def run_libero_progress(args: argparse.Namespace) -> int:
    """Read the demonstrations, fit the progress model, save it and report the loss."""
    from wmrl_agents.policies.vla.demos import iter_demos
    from wmrl_tasks.libero import EpisodeRollout, ProgressModelConfig, TinyProgressModel, progress_examples

    from wmrl_envs import console

    if args.prefixes < 0:
        raise ValueError(f"--prefixes must be >= 0, got {args.prefixes}")
    episodes = [
        EpisodeRollout(task=demo.source, instruction=demo.instruction, frames=demo.images, success=True)
        for path in args.demos
        for demo in iter_demos(path, limit=args.max_demos)
    ]
    settings = {"seed": args.seed}
    if args.epochs is not None:
        settings["epochs"] = args.epochs
    if args.frame_size is not None:
        settings["frame_size"] = args.frame_size
    model = TinyProgressModel(ProgressModelConfig(**settings))
    history = model.fit(progress_examples(episodes, prefixes=args.prefixes))
    path = model.save(args.out)
    summary = {
        "model": str(path),
        "demonstrations": len(episodes),
        "instructions": sorted({e.instruction for e in episodes}),
        "first_loss": history[0],
        "final_loss": history[-1],
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        console.note(
            f"progress model fitted on {len(episodes)} demonstrations: loss {history[0]:.4f} -> {history[-1]:.4f}"
        )
        console.note(f"saved to {path}; use it with --world-model tiny-progress:{path}")
    return 0
