"""Seconds per MiniVLA forward pass on this machine's CPU: the prefill, the cached action decode, the re-scoring.

The transformers MiniVLA (`wmrl_agents.policies.vla.minivla_model`) is built with random
weights at a given size: ``tiny`` (the test suite's scale) or ``minivla`` (the published
sizes, 1.2B parameters, about 5 GB in float32). One policy step is what
`MiniVLAPolicy.act` runs: a prefill of the prompt with the image patches spliced in,
then six cached one-token steps (seven action tokens); GRPO's `score_tokens` is one
teacher-forced pass over prompt + six action tokens, timed here with and without the
backward pass through the LLM and projector. Random weights cost what trained ones do.
Prints a table and writes ``benchmarks/results/minivla_speed.json`` with the load
average, since other processes on a small machine skew every figure.

    OMP_NUM_THREADS=1 python benchmarks/minivla_speed.py --size tiny --reps 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from rich.console import Console
from rich.table import Table
from wmrl_agents.policies.vla.minivla_model import MiniVLAModel, image_pixels
from wmrl_agents.policies.vla.minivla_spec import MINIVLA, MiniVLASpec, QwenSpec, ViTSpec

from wmrl_envs.machine import machine_facts

RESULTS = Path(__file__).resolve().parent / "results" / "minivla_speed.json"
PROMPT_TOKENS = 46
"""Length of MiniVLA's prompt for a typical LIBERO instruction under Qwen2.5's tokenizer (system + user turn)."""
SIZES = {
    "tiny": MiniVLASpec(
        base="prism-qwen25-extra-dinosiglip-224px+0_5b",
        dino=ViTSpec(hidden=64, layers=2, heads=1, intermediate=256, patch=14, image_size=56, registers=4),
        siglip=ViTSpec(hidden=72, layers=2, heads=1, intermediate=96, patch=14, image_size=56),
        llm=QwenSpec(vocab=640, hidden=128, layers=2, heads=2, kv_heads=1, intermediate=256, tied=True),
    ),
    "minivla": MINIVLA,
}


def timed(run: Callable[[], Any], reps: int) -> dict[str, list[float]]:
    """Wall and CPU seconds of `reps` calls of `run`, after one untimed warm-up call.

    With one thread, CPU seconds are what the pass costs on an idle core; wall seconds add the wait for a core.
    """
    run()
    wall, cpu = [], []
    for _ in range(reps):
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return {"wall_s": wall, "cpu_s": cpu}


def measure(spec: MiniVLASpec, batch: int, reps: int) -> dict[str, Any]:
    """Build the model and time prefill, decode, scoring and scoring + backward for `batch` images."""
    from PIL import Image

    torch.manual_seed(0)
    start = time.perf_counter()
    model = MiniVLAModel(spec).eval()
    build_s = time.perf_counter() - start
    rng = np.random.default_rng(0)
    images = [Image.fromarray(rng.integers(0, 256, (128, 128, 3), dtype=np.uint8)) for _ in range(batch)]
    pixels = image_pixels(images, spec.image_size)
    prompt = torch.as_tensor(rng.integers(0, spec.llm.vocab - 256, (1, PROMPT_TOKENS))).expand(batch, -1)
    actions = torch.as_tensor(rng.integers(spec.llm.vocab - 256, spec.llm.vocab, (batch, 6)))

    def act() -> None:
        with torch.no_grad():
            out = model(prompt, pixels, use_cache=True)
            for step in range(6):
                out = model(actions[:, step : step + 1], cache=out.cache, use_cache=True)

    def score() -> None:
        with torch.no_grad():
            model(torch.cat([prompt, actions], dim=1), pixels)

    model.vision.requires_grad_(False)  # frozen in wmrl: only the LLM and projector get gradients
    trainable = [*model.llm.parameters(), *model.projector.parameters()]

    def score_backward() -> None:
        logits = model(torch.cat([prompt, actions], dim=1), pixels).logits
        logits[:, -7:, -256:].log_softmax(-1).sum().backward()
        for p in trainable:
            p.grad = None

    return {
        "parameters": sum(p.numel() for p in model.parameters()),
        "build_s": build_s,
        "act": timed(act, reps),
        "score": timed(score, reps),
        "score_backward": timed(score_backward, reps),
    }


def main() -> None:
    """Parse arguments, measure, print a table and write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny")
    parser.add_argument("--batch", type=int, default=1, help="images per pass (a GRPO group acts as one batch)")
    parser.add_argument("--reps", type=int, default=5, help="timed repetitions after one warm-up")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (set OMP_NUM_THREADS to match)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    result = measure(SIZES[args.size], args.batch, args.reps)
    record = {
        "size": args.size,
        "batch": args.batch,
        "reps": args.reps,
        "threads": args.threads,
        "prompt_tokens": PROMPT_TOKENS,
        "image_tokens": SIZES[args.size].patches,
        "torch": torch.__version__,
        "machine": machine_facts(libraries=("torch", "transformers")),
        **result,
    }
    table = Table(title=f"MiniVLA ({args.size}, {result['parameters']:,} parameters) on CPU, batch {args.batch}")
    for column in ("pass", "median wall s", "min wall s", "median CPU s"):
        table.add_column(column)
    for key in ("act", "score", "score_backward"):
        wall, cpu = result[key]["wall_s"], result[key]["cpu_s"]
        table.add_row(key, f"{statistics.median(wall):.4f}", f"{min(wall):.4f}", f"{statistics.median(cpu):.4f}")
    Console().print(table)
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results[f"{args.size}-batch{args.batch}-threads{args.threads}"] = record
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
